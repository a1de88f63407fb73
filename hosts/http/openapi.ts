import { createDocument } from 'zod-openapi';
import type { z } from 'zod';
import { ErrorOut, ValidationErrorOut } from './schemas/common.ts';
import type { Access, RouteDef } from './route.ts';

export const API_VERSION = '0.1.0';

const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });
const error = (description: string) => ({ description, ...json(ErrorOut) });

/** The `security` of an operation: which credential the route table asks for. */
const security = (access: Access) => {
  switch (access.kind) {
    case 'public':
      return [];
    case 'bearer':
      // OpenAPI 3.1 lets non-OAuth schemes list the roles they require: here, the token scope.
      return [{ bearerAuth: access.scope ? [access.scope] : [] }];
    case 'bearer-or-body':
      return [{ bearerAuth: [access.scope] }, {}];
    case 'operator':
      return [{ operatorKey: [] }];
  }
};

const scopeNote = (access: Access): string => {
  switch (access.kind) {
    case 'public':
      return 'Public: no credential.';
    case 'bearer':
      return access.scope ? `Bearer token with the \`${access.scope}\` scope.` : 'Any valid bearer token.';
    case 'bearer-or-body':
      return `Bearer token with the \`${access.scope}\` scope, or no bearer and the credential in the body.`;
    case 'operator':
      return 'Operator key in the X-Service-Operator-Key header.';
  }
};

function operation(route: RouteDef) {
  const responses: Record<string, unknown> = {};
  for (const r of route.responses) {
    responses[String(r.status)] = r.schema ? { description: r.description, ...json(r.schema) } : { description: r.description };
  }
  if (route.body) responses['400'] = error('The body is not valid JSON');
  if (route.access.kind !== 'public') {
    responses['401'] = error(route.access.kind === 'operator' ? 'Missing or wrong operator key' : 'Missing, invalid, expired or revoked credential');
  }
  if (route.access.kind === 'bearer' || route.access.kind === 'bearer-or-body') responses['403'] = error('The token lacks the required scope');
  if (route.params) responses['404'] = error('No such resource for this tenant');
  if (route.params || route.query || route.body) {
    responses['422'] = { description: 'Invalid input: `errors` names each field to fix', ...json(ValidationErrorOut) };
  }
  if (route.path !== '/healthz') responses['429'] = error('Too many requests; see Retry-After');

  return {
    operationId: route.operationId,
    summary: route.summary,
    description: scopeNote(route.access),
    tags: route.tags,
    security: security(route.access),
    'x-required-scope': route.access.kind === 'bearer' || route.access.kind === 'bearer-or-body' ? route.access.scope : null,
    ...((route.params || route.query) && {
      requestParams: { ...(route.params && { path: route.params }), ...(route.query && { query: route.query }) },
    }),
    ...(route.body && { requestBody: { required: !route.bodyOptional, ...json(route.body) } }),
    responses,
  };
}

const SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token from POST /v1/tokens.' },
  operatorKey: { type: 'apiKey', in: 'header', name: 'X-Service-Operator-Key' },
} as const;

/** Only the schemes some route uses: the document describes what exists. */
const usedSchemes = (routes: readonly RouteDef[]) => {
  const kinds = new Set(routes.map((r) => r.access.kind));
  return {
    ...((kinds.has('bearer') || kinds.has('bearer-or-body')) && { bearerAuth: SCHEMES.bearerAuth }),
    ...(kinds.has('operator') && { operatorKey: SCHEMES.operatorKey }),
  };
};

/** OpenAPI 3.1 for exactly the routes in the table, from the zod schemas that validate them. */
export function buildOpenApi(routes: readonly RouteDef[]): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method] = operation(route);
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'gpu-control-plane',
      version: API_VERSION,
      description: 'One API in front of several upstream GPU clouds, paid from a prepaid balance in integer cents.',
      license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
    },
    servers: [{ url: '/' }],
    security: [],
    paths: paths as never,
    components: { securitySchemes: usedSchemes(routes) },
  });
}
