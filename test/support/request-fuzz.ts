import fc from 'fast-check';

/** Just what the fuzz reads of an OpenAPI 3.1 document. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
}

export interface Operation {
  method: string;
  path: string;
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
  parameters?: { in: 'path' | 'query'; name: string; schema: JsonSchema }[];
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
  security?: Record<string, string[]>[];
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>>;
  components: { schemas: Record<string, JsonSchema> };
}

export const operationsOf = (doc: OpenApiDoc): Operation[] =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })));

/** Values known to the world under test, by field or parameter name: they let requests reach past validation. */
export type Hints = Record<string, readonly unknown[]>;

/** Credentials to send: a valid one mostly, but also none, wrong, malformed and too weak ones. */
export interface Credentials {
  bearer: string;
  weakBearer: string;
  operatorKey: string;
}

export interface FuzzRequest {
  operation: Operation;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const NUL = '\u0000';
const LONE_SURROGATE = '\ud800';
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Text that stresses a parser: control characters, other scripts, emoji, lone surrogates, length. */
const nastyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(`a${NUL}b`, `x${LONE_SURROGATE}`, '', ' ', '\t\n', 'null', '0', '-1', '1e309', '💥', 'x'.repeat(5_000), '<script>', "'; drop table tenants; --"),
);

const wildValue: fc.Arbitrary<unknown> = fc.oneof(
  nastyText,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);

const resolve = (schema: JsonSchema, doc: OpenApiDoc): JsonSchema =>
  schema.$ref ? resolve(doc.components.schemas[schema.$ref.split('/').pop()!]!, doc) : schema;

const pattern = (source: string): fc.Arbitrary<string> => {
  try {
    return fc.stringMatching(new RegExp(source));
  } catch {
    return fc.string();
  }
};

/** A value for a schema: by its type mostly, by a hint when there is one, and anything at all sometimes. */
export function valueFor(raw: JsonSchema, name: string, doc: OpenApiDoc, hints: Hints, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw, doc);
  const hinted = hints[name];
  let typed: fc.Arbitrary<unknown>;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (schema.enum) typed = fc.constantFrom(...schema.enum);
  else if (schema.const !== undefined) typed = fc.constant(schema.const);
  else if (schema.anyOf ?? schema.oneOf) typed = fc.oneof(...(schema.anyOf ?? schema.oneOf)!.map((s) => valueFor(s, name, doc, hints, depth + 1)));
  else if (type === 'object' && depth < 3) typed = objectFor(schema, doc, hints, depth + 1);
  else if (type === 'array') typed = fc.array(valueFor(schema.items ?? {}, name, doc, hints, depth + 1), { maxLength: 4 });
  else if (type === 'integer') typed = fc.integer({ min: (schema.minimum ?? -1_000_000) - 2, max: (schema.maximum ?? 1_000_000) + 2 });
  else if (type === 'number') typed = fc.double({ min: (schema.minimum ?? -1e9) - 1, max: (schema.maximum ?? 1e9) + 1, noNaN: true });
  else if (type === 'boolean') typed = fc.boolean();
  else if (schema.format === 'date-time') typed = fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  else if (schema.pattern) typed = fc.oneof(pattern(schema.pattern), nastyText);
  else typed = fc.oneof(fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 50, 50) }), nastyText);
  return fc.oneof(
    { weight: hinted ? 4 : 0, arbitrary: hinted ? fc.constantFrom(...hinted) : fc.constant(null) },
    { weight: 3, arbitrary: typed },
    { weight: 1, arbitrary: wildValue },
  );
}

function objectFor(schema: JsonSchema, doc: OpenApiDoc, hints: Hints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, property]) =>
    fc
      .tuple(fc.constant(name), valueFor(property, name, doc, hints, depth), fc.integer({ min: 0, max: 9 }))
      // a required field is left out now and then, an optional one half of the time
      .map(([key, value, dice]) => ((required.has(key) ? dice > 0 : dice > 4) ? [[key, value] as const] : [])),
  );
  const extra = fc.oneof({ weight: 9, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), wildValue).map((kv) => [kv]) });
  return fc.tuple(fc.tuple(...fields), extra).map(([parts, more]) => Object.fromEntries([...parts.flat(), ...more]));
}

/** A path segment: a known id, a well-formed unknown one, or something mangled (still one segment). */
const segmentFor = (param: { name: string; schema: JsonSchema }, doc: OpenApiDoc, hints: Hints): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...((hints[param.name] ?? ['x']) as string[])) },
    { weight: 2, arbitrary: param.schema.pattern ? pattern(param.schema.pattern) : fc.string({ minLength: 1 }) },
    {
      weight: 2,
      arbitrary: valueFor(param.schema, '', doc, {})
        .map(asText)
        .filter((s) => s.length > 0 && s.isWellFormed())
        .map(encodeURIComponent),
    },
    { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '%', '%zz', '%00', '%ED%A0%80', 'x'.repeat(3_000), '%2F', 'self') },
  ).filter((s) => !/^(\.|%2e){1,2}$/i.test(s)); // dot segments are resolved by the URL, into another route

/** Any generated value as the text of a URL part (objects from fc.dictionary may lack a prototype). */
const asText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined'));

const encodeQuery = (pairs: [string, string][]) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

function queryFor(operation: Operation, doc: OpenApiDoc, hints: Hints): fc.Arbitrary<string> {
  const params = (operation.parameters ?? []).filter((p) => p.in === 'query');
  const value = (p: (typeof params)[number]) =>
    valueFor(p.schema, p.name, doc, hints)
      .map(asText)
      .filter((v) => v.isWellFormed());
  const known = params.map((p) =>
    fc.tuple(fc.integer({ min: 0, max: 9 }), value(p), value(p)).map(([dice, a, b]): [string, string][] =>
      dice < 7 ? [] : dice < 9 ? [[p.name, a]] : [[p.name, a], [p.name, b]], // left out, once, or repeated
    ),
  );
  const unknown = fc.oneof({ weight: 8, arbitrary: fc.constant([] as [string, string][]) }, { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), fc.string()).map((kv) => [kv]) });
  const pairs = fc.tuple(fc.tuple(...known), unknown).map(([parts, more]) => [...parts.flat(), ...more].filter(([k]) => k.isWellFormed()));
  return fc.oneof(
    { weight: 20, arbitrary: pairs.map(encodeQuery) },
    { weight: 1, arbitrary: fc.constant(`q=${'x'.repeat(20_000)}`) }, // over the 16 kB head limit
  );
}

function bodyFor(operation: Operation, doc: OpenApiDoc, hints: Hints): fc.Arbitrary<{ body?: string; type?: string }> {
  const schema = operation.requestBody?.content['application/json'].schema;
  const json = schema ? valueFor(schema, '', doc, hints).map((v) => JSON.stringify(v)) : fc.constant(undefined);
  const text = fc.oneof(
    { weight: 12, arbitrary: json },
    { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '[1,2', 'not json', '', '"text"', '42', 'null', '[]') },
    { weight: 1, arbitrary: fc.constant(JSON.stringify({ filler: 'x'.repeat(120_000) })) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const type = fc.oneof(
    { weight: 10, arbitrary: fc.constant('application/json') },
    { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/merge-patch+json', 'multipart/form-data; boundary=x') },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  return fc.record({ body: text, type }).map(({ body, type }) => ({ ...(body !== undefined && { body }), ...(type !== undefined && { type }) }));
}

function headersFor(operation: Operation, credentials: Credentials): fc.Arbitrary<Record<string, string>> {
  const scheme = Object.keys(operation.security?.[0] ?? {})[0];
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const anyone = fc.constantFrom<Record<string, string>>(
    {},
    bearer('gcp_tok_guess_0000000000000000000000'),
    { authorization: 'Basic dXNlcjpwYXNz' },
    { authorization: 'Bearer' },
    { 'x-service-operator-key': 'wrong-operator-key-0123456789' },
  );
  const valid =
    scheme === 'bearerAuth'
      ? fc.constantFrom(bearer(credentials.bearer), bearer(credentials.bearer), bearer(credentials.weakBearer))
      : scheme === 'operatorKey'
        ? fc.constant({ 'x-service-operator-key': credentials.operatorKey })
        : fc.constant({});
  return fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: anyone });
}

/** One request against one operation of the document, or against its path with another method. */
export function requestFor(operation: Operation, doc: OpenApiDoc, hints: Hints, credentials: Credentials): fc.Arbitrary<FuzzRequest> {
  const pathParams = (operation.parameters ?? []).filter((p) => p.in === 'path');
  const segments = fc.tuple(...pathParams.map((p) => segmentFor(p, doc, hints)));
  const method = fc.oneof({ weight: 8, arbitrary: fc.constant(operation.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) });
  return fc
    .record({ method, segments, query: queryFor(operation, doc, hints), body: bodyFor(operation, doc, hints), headers: headersFor(operation, credentials) })
    .map(({ method, segments, query, body, headers }) => {
      let path = operation.path;
      pathParams.forEach((p, i) => (path = path.replace(`{${p.name}}`, segments[i]!)));
      const sendsBody = method !== 'GET' && method !== 'HEAD' && body.body !== undefined;
      const request: FuzzRequest = {
        operation,
        method,
        path: query ? `${path}?${query}` : path,
        headers: { ...headers, ...(sendsBody && body.type && { 'content-type': body.type }) },
        ...(sendsBody && { body: body.body }),
      };
      // a counterexample reads as the request, not as the whole operation it came from
      return Object.assign(request, {
        [fc.toStringMethod]: () => `${request.method} ${request.path.slice(0, 300)} ${JSON.stringify(request.headers)} ${request.body?.slice(0, 300) ?? ''}`,
      });
    });
}
