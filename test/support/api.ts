import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import type { ControlPlaneConfig } from '../../hosts/composition/config.ts';
import { createControlPlane, type ControlPlane, type ControlPlaneOverrides } from '../../hosts/composition/control-plane.ts';
import { createHttpApp } from '../../hosts/http/app.ts';
import { listenHttp } from '../../hosts/http/server.ts';
import { freshDatabase, type TestDatabase } from './database.ts';
import { OpenApiValidator } from './openapi-validator.ts';

export const OPERATOR_KEY = 'test-operator-key-0123456789';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestApi {
  baseUrl: string;
  plane: ControlPlane;
  clock: ManualClock;
  /**
   * One request to the server; its answer is checked against /openapi.json (status, content type, JSON body,
   * required headers: support/openapi-validator.ts) and a drift throws. `unchecked` leaves out that check,
   * for a test of what the document cannot describe.
   */
  call<T = any>(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; unchecked?: boolean },
  ): Promise<ApiResponse<T>>;
  /** A new tenant and its root token with every scope. */
  newTenant(name?: string): Promise<{ tenantId: string; token: string; tokenId: string }>;
  close(): Promise<void>;
}

/** The real HTTP server on a free port, over a fresh database, with a clock the test moves. */
export async function startApi(
  config: Partial<ControlPlaneConfig> = {},
  options: { providers?: ControlPlaneOverrides['providers']; payments?: ControlPlaneOverrides['payments']; wrapProvider?: ControlPlaneOverrides['wrapProvider']; webhookResolver?: ControlPlaneOverrides['webhookResolver']; database?: TestDatabase; clock?: ManualClock; logger?: Logger } = {},
): Promise<TestApi> {
  const database: TestDatabase = options.database ?? (await freshDatabase());
  const clock = options.clock ?? new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
  const plane = await createControlPlane(
    {
      storage: database.target,
      operatorKeys: [OPERATOR_KEY],
      rateLimits: { publicPerMinute: 100_000, perTokenPerMinute: 100_000, operatorPerMinute: 100_000 },
      logLevel: 'silent',
      ...config,
      market: { backgroundRefresh: false, ...config.market },
      billing: { sweep: false, ...config.billing },
      // a test that wants deliveries runs the worker itself (services.webhookDeliveries.deliverDue)
      webhooks: { delivery: false, ...config.webhooks },
    },
    { clock, logger: options.logger ?? pino({ level: 'silent' }), ...(options.providers && { providers: options.providers }), ...(options.payments && { payments: options.payments }), ...(options.wrapProvider && { wrapProvider: options.wrapProvider }), ...(options.webhookResolver && { webhookResolver: options.webhookResolver }) },
  );
  const server: Server = listenHttp(createHttpApp(plane), 0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const validator = new OpenApiValidator(plane.openApi as Record<string, unknown>);
  const call: TestApi['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    // a redirect is an answer of this server, checked as such: not followed to wherever it points
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text, the test will say so */
    }
    if (!options.unchecked) validator.check({ method, url: path, status: response.status, headers: response.headers, body: parsed });
    return { status: response.status, headers: response.headers, body: parsed as any };
  };

  return {
    baseUrl,
    plane,
    clock,
    call,
    async newTenant(name = 'acme') {
      const tenant = await call('POST', '/v1/tenants', { body: { name } });
      const token = await call('POST', '/v1/tokens', {
        body: { tenant_id: tenant.body.id, bootstrap_secret: tenant.body.bootstrap_secret, scopes: ['read', 'rent', 'manage', 'billing'] },
      });
      if (token.status !== 201) throw new Error(`bootstrap failed: ${token.status} ${JSON.stringify(token.body)}`);
      return { tenantId: tenant.body.id, token: token.body.token, tokenId: token.body.id };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await plane.close();
      if (!options.database) await database.drop();
    },
  };
}
