import { createDocument } from 'zod-openapi';
import { z } from 'zod';
import { BODY_LIMIT_KB } from './json-body.ts';
import { MAX_HEAD_BYTES } from './server.ts';
import { ErrorOut, ValidationErrorOut } from './schemas/common.ts';
import { tagDescription } from './openapi-tags.ts';
import { singleTypes } from './single-types.ts';
import type { Access, RouteDef } from './route.ts';

export const API_VERSION = '0.1.0';

const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });

/**
 * The `security` of an operation: which credential the route table asks for. The token scope it needs is
 * stated beside it (`x-required-scope` and the description), not as a role in the requirement: OpenAPI 3.1
 * allows roles for any scheme, but linters and client generators read a requirement's list as OAuth scopes
 * the scheme must declare, and a bearer scheme declares none.
 */
const security = (access: Access) => {
  switch (access.kind) {
    case 'public':
      return [];
    case 'bearer':
      return [{ bearerAuth: [] }];
    case 'bearer-or-body':
      return [{ bearerAuth: [] }, {}];
    case 'operator':
      return [{ operatorKey: [] }];
    case 'monitoring':
      return [{ operatorKey: [] }, { metricsToken: [] }];
  }
};

const scopeNote = (access: Access): string => {
  switch (access.kind) {
    case 'public':
      return 'Public: no credential.';
    case 'bearer': {
      const base = access.scope ? `Bearer token with the \`${access.scope}\` scope` : 'Any valid bearer token';
      if (access.root) return `${base}, and root: a console session of an owner or admin, or a token with every scope and no limit.`;
      if (access.tenantManage) return `${base} over the whole tenant: not a member's console session nor a token under one.`;
      return `${base}.`;
    }
    case 'bearer-or-body':
      return `Bearer token with the \`${access.scope}\` scope, or no bearer and the credential in the body.`;
    case 'operator':
      return 'Operator key in the X-Service-Operator-Key header.';
    case 'monitoring':
      return 'Operator key in the X-Service-Operator-Key header, or `Authorization: Bearer <METRICS_TOKEN>`.';
  }
};

/** Rate-limit state on every answer of a limited route (IETF draft 7 headers, as express-rate-limit sends them). */
const RATE_LIMIT_HEADERS = {
  RateLimit: z
    .string()
    .optional()
    .meta({ description: 'What is left of the current window: `limit=30, remaining=29, reset=60` (reset in seconds).', header: { id: 'RateLimit' } }),
  'RateLimit-Policy': z
    .string()
    .optional()
    .meta({ description: 'The limit that applies to this caller: `30;w=60` is 30 requests a 60-second window.', header: { id: 'RateLimit-Policy' } }),
};
const RETRY_AFTER = z.int().min(1).meta({ description: 'Seconds to wait before sending again.', header: { id: 'Retry-After' } });
/** On a 503, only when the database is the cause (a cloud's or the market's 503 has none). */
const RETRY_AFTER_DATABASE = z.int().min(1).optional().meta({ description: 'With `the database is unavailable`: seconds to wait before trying again (5).' });

const error = (description: string) => ({ description, schema: ErrorOut });

/**
 * The statuses every route of its kind answers, derived from the route definition: its credential, whether
 * it reads a path, query or body, whether it is rate limited. A route's own `responses` add its successes and
 * domain outcomes.
 */
function derivedResponses(route: RouteDef): Map<number, { description: string; schema: z.ZodType }> {
  const derived = new Map<number, { description: string; schema: z.ZodType }>();
  const { access } = route;
  const malformed = [route.body && 'the body is not valid JSON', route.params && 'a path parameter is not valid percent-encoding'].filter(Boolean);
  if (malformed.length > 0) derived.set(400, error(`Malformed request: ${malformed.join(', or ')}`));
  if (access.kind === 'operator') {
    derived.set(401, error('Missing or wrong operator key (or none configured on this server)'));
  } else if (access.kind === 'monitoring') {
    derived.set(401, error('Missing or wrong operator key or metrics token'));
  } else if (access.kind === 'bearer') {
    derived.set(401, error('Missing, invalid, expired or revoked bearer token'));
  } else if (access.kind === 'bearer-or-body') {
    derived.set(401, error('Invalid, expired or revoked bearer token; without one, a missing, wrong or used bootstrap secret'));
  }
  if ((access.kind === 'bearer' || access.kind === 'bearer-or-body') && access.scope) derived.set(403, error(`The token lacks the \`${access.scope}\` scope`));
  if (access.kind === 'bearer' && access.root) {
    derived.set(403, error(`${access.scope ? `The token lacks the \`${access.scope}\` scope, or` : 'The credential'} is not root (ROOT_REQUIRED): an owner's or admin's session, or a token with every scope and no limit`));
  }
  if (access.kind === 'bearer' && access.tenantManage) {
    derived.set(403, error(`The token lacks the \`${access.scope}\` scope, or it is a member's console session or a token under one (TENANT_MANAGE_REQUIRED): a member manages only its own tokens, SSH keys, images and templates`));
  }
  if (route.params) {
    const names = Object.keys(route.params.shape).join(', ');
    derived.set(404, error(access.kind === 'operator' || access.kind === 'public' ? `No such ${names}` : `No such ${names} for this tenant`));
  }
  if (route.body) {
    derived.set(413, error(`The body is over ${BODY_LIMIT_KB} kB`));
    derived.set(415, error('A body sent with another Content-Type than application/json (or an unsupported charset or encoding)'));
  }
  if (route.params || route.query || route.body) {
    derived.set(422, { description: 'Invalid input: `errors` names each field to fix', schema: ValidationErrorOut });
  }
  if (!route.unlimited) derived.set(429, error('Too many requests; wait Retry-After seconds'));
  // every route that reads the database (liveness and readiness aside, which are unlimited and answer without it)
  if (!route.unlimited && route.database !== false) derived.set(503, error('The database is unavailable; try again after Retry-After seconds'));
  derived.set(431, error(`The URL and headers are over ${MAX_HEAD_BYTES / 1024} kB together`));
  return derived;
}

/** The token scope a route needs, if any: the `x-required-scope` of its operation (the MCP tools read it too). */
const requiredScope = (access: Access): string | null => ((access.kind === 'bearer' || access.kind === 'bearer-or-body') && access.scope) || null;

/**
 * A request body's example, for the tools that build requests from the document (contract-test generators,
 * mock servers): the first of the body schema's own `examples`. test/api/openapi-examples.test.ts sends each
 * one to a server and wants it accepted.
 */
const bodyExample = (body: z.ZodType): { example?: unknown } => {
  const examples = (body.meta() as { examples?: unknown[] } | undefined)?.examples;
  return examples && examples.length > 0 ? { example: examples[0] } : {};
};

const headersOf = (shape: Record<string, z.ZodType>) => (Object.keys(shape).length > 0 ? { headers: z.object(shape) } : {});

function operation(route: RouteDef) {
  const limits = route.unlimited ? {} : RATE_LIMIT_HEADERS;
  const responses: Record<string, unknown> = {};
  const own = new Map(route.responses.map((r) => [r.status, r]));
  const derived = derivedResponses(route);
  for (const status of [...new Set([...own.keys(), ...derived.keys()])].sort((a, b) => a - b)) {
    const mine = own.get(status);
    const common = derived.get(status);
    const description = [common?.description, mine?.description].filter(Boolean).join('; or: ');
    const schema = mine?.schema ?? common?.schema ?? (status >= 400 ? ErrorOut : undefined);
    const headers = status === 431 ? {} : { ...limits, ...(status === 429 && { 'Retry-After': RETRY_AFTER }), ...(status === 503 && derived.has(503) && { 'Retry-After': RETRY_AFTER_DATABASE }), ...mine?.headers };
    responses[String(status)] = {
      description,
      ...(schema && { content: { [mine?.contentType ?? 'application/json']: { schema } } }),
      ...headersOf(headers),
    };
  }
  if (!Object.keys(responses).some((status) => /^[23]\d\d$/.test(status))) {
    throw new Error(`${route.method.toUpperCase()} ${route.path} declares no success status`);
  }
  responses.default = { description: 'Unexpected failure (500): a bug or an outage, logged on the server', ...json(ErrorOut), ...headersOf(limits) };

  return {
    operationId: route.operationId,
    summary: route.summary,
    description: scopeNote(route.access),
    tags: route.tags,
    security: security(route.access),
    ...(requiredScope(route.access) && { 'x-required-scope': requiredScope(route.access) }),
    ...(route.access.kind === 'bearer' && route.access.root && { 'x-requires-root': true }),
    ...(route.access.kind === 'bearer' && route.access.tenantManage && { 'x-requires-tenant-manage': true }),
    // what an agent's tooling needs to know before it calls: this operation can spend money (the spend gate decides)
    ...(route.commitsMoney && { 'x-commits-money': true }),
    ...((route.params || route.query) && {
      requestParams: { ...(route.params && { path: route.params }), ...(route.query && { query: route.query }) },
    }),
    ...(route.body && { requestBody: { required: !route.bodyOptional, content: { 'application/json': { schema: route.body, ...bodyExample(route.body) } } } }),
    responses,
  };
}

const SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token from POST /v1/tokens.' },
  operatorKey: { type: 'apiKey', in: 'header', name: 'X-Service-Operator-Key' },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'The METRICS_TOKEN this server was started with (monitoring only).' },
} as const;

/** Only the schemes some route uses: the document describes what exists. */
const usedSchemes = (routes: readonly RouteDef[]) => {
  const kinds = new Set(routes.map((r) => r.access.kind));
  return {
    ...((kinds.has('bearer') || kinds.has('bearer-or-body')) && { bearerAuth: SCHEMES.bearerAuth }),
    ...((kinds.has('operator') || kinds.has('monitoring')) && { operatorKey: SCHEMES.operatorKey }),
    ...(kinds.has('monitoring') && { metricsToken: SCHEMES.metricsToken }),
  };
};

/** OpenAPI 3.1 for exactly the routes in the table, from the zod schemas that validate them. */
export function buildOpenApi(routes: readonly RouteDef[]): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method] = operation(route);
  }
  const tags = [...new Set(routes.flatMap((route) => route.tags))].map((name) => ({ name, description: tagDescription(name) }));
  const document = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'gpu-control-plane',
      version: API_VERSION,
      // a self-hosted server: whoever runs it answers for it, and /docs is where its reference is read
      contact: { name: 'The operators of this server' },
      description:
        'One API in front of several upstream GPU clouds, paid from a prepaid balance in integer cents. ' +
        'Every error is JSON `{detail}`. Every path answers OPTIONS with 204 and `Allow`; a method a path does not list answers 405 with `Allow`; ' +
        'a path that is not valid percent-encoding answers 400 whatever the method.',
      license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
    },
    servers: [{ url: '/' }],
    security: [],
    tags,
    paths: paths as never,
    components: { securitySchemes: usedSchemes(routes) },
  });
  return singleTypes(withParameterExamples(document)) as object;
}

/** A parameter's example stated on the parameter itself (where request builders look first), from its schema's `examples`. */
function withParameterExamples<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, { parameters?: { schema?: unknown; example?: unknown }[] }>> }).paths ?? {};
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) {
        // a choice's first value or its default, when nothing better is given
        const schema = parameter.schema as { examples?: unknown[]; enum?: unknown[]; default?: unknown } | undefined;
        const first = schema?.examples?.[0] ?? schema?.enum?.[0] ?? schema?.default;
        if (first !== undefined && parameter.example === undefined) parameter.example = first;
      }
    }
  }
  return document;
}
