import { ZodError, type ZodType } from 'zod';
import type { CodeHost, DevicePoll, DeviceStart } from '../../../core/ports/code-host.ts';
import type { IdentityRef } from '../../../core/ports/identity.ts';
import { GithubHttpError, type GithubClient } from './client.ts';
import { DeviceMemory } from './device-memory.ts';
import {
  DEFAULT_INTERVAL_SECONDS,
  DEVICE_GRANT_TYPE,
  PROVIDER,
  SCOPE,
  emailsSchema,
  primaryVerifiedEmail,
  readTokenAnswer,
  toDeviceStart,
  toIdentity,
  userSchema,
} from './mapping.ts';

export interface GithubCodeHostOptions {
  clientId: string;
  /** Device codes remembered at once (interval last told, a token whose profile read failed). */
  memoryLimit: number;
  now: () => number;
}

/** How long a token issued for a code is held when no start was seen here (GitHub's default code lifetime). */
const HOLD_WITHOUT_START_MS = 15 * 60_000;

const parse = <T>(schema: ZodType<T>, body: unknown, what: string): T => {
  try {
    return schema.parse(body);
  } catch (error) {
    if (!(error instanceof ZodError)) throw error;
    throw new GithubHttpError(200, `${what}: unexpected answer shape (${error.issues[0]?.message ?? 'invalid'})`);
  }
};

/**
 * Without the emails permission GitHub answers 403 or 404: the person then has no address we know.
 * A rate limit (403 or 429 saying so) is an outage, not an answer.
 */
const isNoEmailAccess = (error: unknown): boolean =>
  error instanceof GithubHttpError && (error.status === 403 || error.status === 404) && !/rate limit/i.test(error.message);

/**
 * GitHub's OAuth device flow (RFC 8628) as a CodeHost. Outages and configuration faults throw plain
 * errors (GithubHttpError, GithubTransportError, GithubOAuthError), never a DomainError: the host answers 503.
 */
export class GithubCodeHost implements CodeHost {
  readonly name = PROVIDER;
  readonly #client: GithubClient;
  readonly #clientId: string;
  readonly #now: () => number;
  readonly #memory: DeviceMemory;
  /** One GitHub poll per device code at a time in this process: parallel callers share its answer. */
  readonly #inFlight = new Map<string, Promise<DevicePoll>>();

  constructor(client: GithubClient, options: GithubCodeHostOptions) {
    this.#client = client;
    this.#clientId = options.clientId;
    this.#now = options.now;
    this.#memory = new DeviceMemory(options.memoryLimit, options.now);
  }

  async startDevice(): Promise<DeviceStart> {
    const start = toDeviceStart(await this.#client.postForm('/login/device/code', { client_id: this.#clientId, scope: SCOPE }));
    this.#memory.remember(start.deviceCode, {
      interval: start.interval,
      accessToken: null,
      expiresAt: this.#now() + start.expiresIn * 1000,
    });
    return start;
  }

  pollDevice(deviceCode: string): Promise<DevicePoll> {
    const running = this.#inFlight.get(deviceCode);
    if (running) return running;
    const poll = this.#poll(deviceCode).finally(() => this.#inFlight.delete(deviceCode));
    this.#inFlight.set(deviceCode, poll);
    return poll;
  }

  async #poll(deviceCode: string): Promise<DevicePoll> {
    const known = this.#memory.get(deviceCode);
    let accessToken = known?.accessToken ?? null;
    if (accessToken === null) {
      const answer = readTokenAnswer(
        await this.#client.postForm('/login/oauth/access_token', {
          client_id: this.#clientId,
          device_code: deviceCode,
          grant_type: DEVICE_GRANT_TYPE,
        }),
        known?.interval ?? DEFAULT_INTERVAL_SECONDS,
      );
      if (!('accessToken' in answer)) {
        if (answer.status === 'slow_down' && known) this.#memory.remember(deviceCode, { ...known, interval: answer.interval });
        if (answer.status === 'expired' || answer.status === 'denied') this.#memory.forget(deviceCode);
        return answer;
      }
      accessToken = answer.accessToken;
      this.#memory.remember(deviceCode, {
        interval: known?.interval ?? DEFAULT_INTERVAL_SECONDS,
        accessToken,
        expiresAt: known?.expiresAt ?? this.#now() + HOLD_WITHOUT_START_MS,
      });
    }
    const identity = await this.#readIdentity(accessToken);
    // the token only served to read who this is: dropped here, never stored or logged
    this.#memory.forget(deviceCode);
    return { status: 'complete', identity };
  }

  async #readIdentity(accessToken: string): Promise<IdentityRef> {
    const [user, email] = await Promise.all([
      this.#client.getJson('/user', accessToken).then((body) => parse(userSchema, body, 'GET /user')),
      this.#readEmail(accessToken),
    ]);
    return toIdentity(user, email);
  }

  async #readEmail(accessToken: string): Promise<string | null> {
    try {
      const body = await this.#client.getJson('/user/emails?per_page=100', accessToken);
      return primaryVerifiedEmail(parse(emailsSchema, body, 'GET /user/emails'));
    } catch (error) {
      if (isNoEmailAccess(error)) return null;
      throw error;
    }
  }
}
