import type { CheckerOptions } from './provider-description.ts';

/**
 * The project's own small description of what a fake serves: each operation the adapter uses, with the auth it
 * takes, the fields its request must carry and the fields its answer must have for the adapter to read it, and
 * the cloud's error envelope. It is written from the cloud's references (the fake's header names them), not
 * copied from a published file, and built here into an OpenAPI 3.0 document that DescriptionChecker reads: the
 * fake is held to it in every run, with or without the clouds' published descriptions at hand (which, where
 * present, are checked as well, and hold this one to them).
 */

type Schema = Record<string, unknown>;

export const str: Schema = { type: 'string' };
export const int: Schema = { type: 'integer' };
export const num: Schema = { type: 'number' };
export const bool: Schema = { type: 'boolean' };
export const nullable = (schema: Schema): Schema => ({ ...schema, nullable: true });
export const oneOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
export const arr = (items: Schema, limits: { maxItems?: number } = {}): Schema => ({ type: 'array', items, ...limits });
/** An object with these fields required and these optional; fields not named are allowed, as clouds add fields. */
export const obj = (required: Record<string, Schema>, optional: Record<string, Schema> = {}): Schema => ({
  type: 'object',
  required: Object.keys(required),
  properties: { ...required, ...optional },
});

export interface ServedOperation {
  /** The JSON body it takes; absent: none. */
  body?: Schema;
  /** Query parameters it requires. */
  query?: Record<string, Schema>;
  /** Each success status with the schema of its JSON answer, or null for one without a body. */
  answers: Record<number, Schema | null>;
  /** Called without credentials (a token endpoint). */
  open?: boolean;
}

export interface ServedApi {
  title: string;
  /** The server URL with the API's version prefix. */
  server: string;
  /** How a request proves itself: an API key in a header, or a bearer. */
  auth: { header: string } | 'bearer';
  /** The cloud's error envelope, which every error answer has. */
  error: Schema;
  /** "METHOD /path", paths templated as `{id}`. */
  operations: Record<string, ServedOperation>;
}

export interface ServedDescription {
  doc: Record<string, any>;
  options: CheckerOptions;
  /** "METHOD /path" of every operation, the server's version prefix included. */
  operations: string[];
}

export function servedDescription(api: ServedApi): ServedDescription {
  const prefix = new URL(api.server).pathname.replace(/\/+$/, '');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [key, operation] of Object.entries(api.operations)) {
    const [method, path] = key.split(' ') as [string, string];
    const parameters = [
      ...[...path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: str })),
      ...Object.entries(operation.query ?? {}).map(([name, schema]) => ({ name, in: 'query', required: true, schema })),
    ];
    const responses = Object.fromEntries(
      Object.entries(operation.answers).map(([status, schema]) => [status, schema === null ? { description: 'no body' } : { description: 'answer', content: { 'application/json': { schema } } }]),
    );
    (paths[path] ??= {})[method.toLowerCase()] = {
      ...(operation.open && { security: [] }),
      ...(parameters.length > 0 && { parameters }),
      ...(operation.body && { requestBody: { required: true, content: { 'application/json': { schema: operation.body } } } }),
      responses,
    };
  }
  const scheme = api.auth === 'bearer' ? { type: 'http', scheme: 'bearer' } : { type: 'apiKey', in: 'header', name: api.auth.header };
  return {
    doc: {
      openapi: '3.0.3',
      info: { title: api.title, version: 'as served by the fake' },
      servers: [{ url: api.server }],
      security: [{ auth: [] }],
      components: { securitySchemes: { auth: scheme }, schemas: { Error: api.error } },
      paths,
    },
    options: { errorSchema: 'Error' },
    operations: Object.keys(api.operations).map((key) => key.replace(' ', ` ${prefix}`)),
  };
}
