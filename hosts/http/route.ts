import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Scope } from '../../core/tenancy/scopes.ts';
import type { Token } from '../../core/tenancy/token.ts';
import type { Coding } from './content-coding.ts';

/**
 * Who may call a route. This one table drives both the middleware that enforces it and the
 * `security` that /openapi.json states for the operation.
 */
export type Access =
  | { kind: 'public' }
  /**
   * `root`: only a root credential (docs/decisions.md, "One tree of authority"); others get 403 ROOT_REQUIRED.
   * `tenantManage`: manage over the whole tenant, not only what the caller saved (core/tenancy/tenant-manage.ts): a
   * member's session and every token under it get 403 TENANT_MANAGE_REQUIRED.
   */
  | { kind: 'bearer'; scope: Scope | null; root?: boolean; tenantManage?: boolean }
  /** A bearer token with `scope`, or no bearer and a credential in the body (bootstrap). */
  | { kind: 'bearer-or-body'; scope: Scope }
  | { kind: 'operator' }
  /** Monitoring (GET /metrics): an operator key, or `Authorization: Bearer <METRICS_TOKEN>` when one is set. */
  | { kind: 'monitoring'; metricsToken: string | null };

/**
 * A success, or an outcome of the use case (a 404, 409, 503... the route's own domain outcomes). The statuses
 * every route of a kind can answer (401 for a credential, 422 for inputs, 429...) are derived from the rest
 * of the route definition in openapi.ts; list here only what this route's handler adds.
 */
export interface RouteResponse {
  status: number;
  description: string;
  /** Defaults to ErrorOut for an error status. */
  schema?: z.ZodType;
  /** Default application/json. */
  contentType?: 'application/json' | 'text/html' | typeof PROMETHEUS_TEXT;
  /** Headers this answer carries besides the rate-limit ones, by their canonical name, e.g. Location. */
  headers?: Record<string, z.ZodType>;
}

/** Prometheus's text exposition format (version 0.0.4), what scrapers ask for. */
export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

export interface HandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The authenticated token, when the route's access admits one and the caller sent it. */
  caller: Token | null;
  req: Request;
  res: Response;
}

export type RawBody =
  | { contentType: 'application/json' | 'text/html' | typeof PROMETHEUS_TEXT; text: string }
  /**
   * Chunks written in turn in one go, so a cached head is sent without being copied. `sent`, if any, is
   * called once they are all with the operating system (the answer's 'finish'): their memory may be reused.
   */
  | { contentType: 'application/json'; chunks: readonly Buffer[]; coding: Coding; sent?: () => void };

export interface HandlerResult {
  status: number;
  body?: unknown;
  /**
   * A body already in its final form: an HTML page, or JSON built from cached parts, as text or as bytes in
   * the content coding the handler chose from Accept-Encoding (then sent with Content-Encoding and
   * Vary: Accept-Encoding). Wins over `body`.
   */
  raw?: RawBody;
  headers?: Record<string, string>;
}

export interface RouteDef {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path: /v1/tokens/{token_id} */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  access: Access;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The body may be left out entirely (an empty request is read as `{}`). */
  bodyOptional?: boolean;
  /** Never rate limited (liveness probes). */
  unlimited?: boolean;
  /** false: the route never reads the database, so it never answers 503 for it (the OpenAPI document, metrics). */
  database?: false;
  /**
   * The route can commit money (a machine, a booking, storage): its use case passes the one spend gate
   * (docs/decisions.md, "One spend gate"), and test/api/spend-gate.model.test.ts drives every route marked so.
   */
  commitsMoney?: true;
  responses: RouteResponse[];
  handle(ctx: HandlerContext<any, any, any>): Promise<HandlerResult>;
}

/** Types the handler from the route's own schemas, then erases them for the route table. */
export function defineRoute<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  def: Omit<RouteDef, 'params' | 'query' | 'body' | 'handle'> & {
    params?: P;
    query?: Q;
    body?: B;
    handle(
      ctx: HandlerContext<
        P extends z.ZodObject ? z.output<P> : Record<string, never>,
        Q extends z.ZodObject ? z.output<Q> : Record<string, never>,
        B extends z.ZodType ? z.output<B> : undefined
      >,
    ): Promise<HandlerResult>;
  },
): RouteDef {
  return def as RouteDef;
}
