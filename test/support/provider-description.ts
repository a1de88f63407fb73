import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Holds a fake cloud to the cloud's own published API description (OpenAPI 3.0 or 3.1): each request the fake
 * received and each answer it gave, as the fake recorded them, is checked against the operation the description
 * has for its method and path (path templating), its required parameters, its security, its request body schema
 * and the schema of the answer's status. The clouds' published descriptions are not part of this repository: they
 * are read from PROVIDER_DESCRIPTIONS_DIR, else from the `providers` folder of the `shared` directory beside the
 * repository; REQUIRE_PROVIDER_DESCRIPTIONS=1 (CI) makes their absence a failure. Absent otherwise, a fake is still
 * held to the project's own description of what it serves (test/support/served-api.ts), which runs always.
 */

type Json = Record<string, any>;

const ROOT = resolve(import.meta.dirname, '../..');

export interface LoadedDescription {
  /** null when the file is absent (and its absence allowed): `reason` says where it was looked for. */
  doc: Json | null;
  reason: string;
}

export function loadProviderDescription(file: string, env: Record<string, string | undefined> = process.env): LoadedDescription {
  const dir = env.PROVIDER_DESCRIPTIONS_DIR || join(ROOT, '..', 'shared', 'providers');
  const path = join(dir, file);
  if (!existsSync(path)) {
    const reason = `${file} not found in ${dir} (set PROVIDER_DESCRIPTIONS_DIR to the folder holding the clouds' API descriptions)`;
    if (env.REQUIRE_PROVIDER_DESCRIPTIONS === '1') throw new Error(`REQUIRE_PROVIDER_DESCRIPTIONS=1: ${reason}`);
    return { doc: null, reason };
  }
  return { doc: JSON.parse(readFileSync(path, 'utf8')) as Json, reason: `read from ${path}` };
}

/** One exchange as a fake recorded it: the full URL path (with the version prefix), query, headers and both bodies. */
export interface RecordedExchange {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  status: number | null;
  /** The answer's JSON, or its text when it is not JSON; undefined for an empty answer. */
  answer: unknown;
}

export interface CheckerOptions {
  /** Required header parameters a network in front of the cloud adds, never the client (Cloudflare's cf-connecting-ip). */
  headersAddedOnTheWay?: readonly string[];
  /**
   * The error envelope the description states in prose for every operation (a schema name under
   * components/schemas): an error status an operation does not declare is checked against it.
   */
  errorSchema?: string;
}

/** OpenAPI 3.0's `nullable` is not JSON Schema: turned into a null alternative, everywhere in the document. */
function jsonSchemaOf(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchemaOf);
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = jsonSchemaOf(value);
  if (out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type)) out.type = [...new Set([...out.type, 'null'])];
    else return { anyOf: [out, { type: 'null' }] };
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  }
  return out;
}

interface Operation {
  path: string;
  method: string;
  pattern: RegExp;
  op: Json;
  parameters: Json[];
}

const DOC_ID = 'https://provider-description.invalid/openapi.json';
const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class DescriptionChecker {
  readonly doc: Json;
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[];
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly prefix: string;
  private readonly options: CheckerOptions;

  constructor(doc: Json, options: CheckerOptions = {}) {
    this.doc = jsonSchemaOf(doc) as Json;
    this.options = options;
    // the path part of the first server ("https://api.shadeform.ai/v1" → "/v1"); paths may carry it themselves
    this.prefix = doc.servers?.[0]?.url ? new URL(doc.servers[0].url).pathname.replace(/\/+$/, '') : '';
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema({ ...this.doc, $id: DOC_ID });
    this.operations = Object.entries(this.doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch'].includes(method))
        .map(([method, op]) => ({
          path,
          method: method.toUpperCase(),
          pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
          op: op as Json,
          parameters: [...((item.parameters ?? []) as Json[]), ...(((op as Json).parameters ?? []) as Json[])].map((p) => this.resolve(p)),
        })),
    );
  }

  private resolve(node: Json): Json {
    let current = node;
    while (current?.$ref) current = current.$ref.split('/').slice(1).reduce((at: Json, part: string) => at[part.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
    return current;
  }

  private validator(path: string): ValidateFunction {
    let validate = this.compiled.get(path);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}#/${path}` });
      this.compiled.set(path, validate);
    }
    return validate;
  }

  private errors(validate: ValidateFunction, where: string): string[] {
    return (validate.errors ?? []).slice(0, 8).map((e) => `${where}${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /** The description's operation for a method and a full URL path; null when it has none. */
  operationOf(method: string, fullPath: string): Operation | null {
    const path = this.prefix && fullPath.startsWith(this.prefix) ? fullPath.slice(this.prefix.length) : fullPath;
    const candidates = this.operations.filter((o) => o.method === method.toUpperCase() && o.pattern.test(path));
    // a literal segment beats a template ("/instances/types" before "/instances/{id}")
    candidates.sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0));
    return candidates[0] ?? null;
  }

  /** What is wrong with a request, by the description; empty when it is one the cloud accepts. */
  requestProblems(exchange: RecordedExchange): string[] {
    const operation = this.operationOf(exchange.method, exchange.path);
    if (!operation) return [`${exchange.method} ${exchange.path}: no such operation in the description`];
    const problems: string[] = [];
    const where = `${operation.method} ${operation.path}`;
    const header = (name: string) => {
      const value = exchange.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    };
    for (const [index, parameter] of operation.parameters.entries()) {
      const { name, in: at, required } = parameter as { name: string; in: string; required?: boolean };
      if (at === 'header' && this.options.headersAddedOnTheWay?.includes(name.toLowerCase())) continue;
      const value = at === 'query' ? exchange.query[name] : at === 'header' ? header(name) : at === 'path' ? 'templated' : undefined;
      if (value === undefined) {
        if (required) problems.push(`${where}: the required ${at} parameter ${name} is missing`);
        continue;
      }
      if (at !== 'query' || !parameter.schema) continue;
      const type = parameter.schema.type;
      const typed = type === 'number' || type === 'integer' ? Number(value) : type === 'boolean' ? value === 'true' ? true : value === 'false' ? false : value : type === 'array' ? value.split(',') : value;
      const validate = this.validator(this.parameterPointer(operation, index));
      if (!validate(typed)) problems.push(...this.errors(validate, `${where}: query ${name}`));
    }
    problems.push(...this.securityProblems(operation, header).map((p) => `${where}: ${p}`));
    const body = operation.op.requestBody ? this.resolve(operation.op.requestBody) : null;
    if (body) {
      if (exchange.body === undefined) {
        if (body.required) problems.push(`${where}: the request body is required`);
      } else {
        const media = Object.keys(body.content ?? {}).find((type) => type.startsWith('application/json'));
        if (!media) problems.push(`${where}: a JSON body where the description takes ${Object.keys(body.content ?? {}).join(', ')}`);
        else if (body.content[media].schema) {
          const validate = this.validator(this.bodyPointer(operation, media));
          if (!validate(exchange.body)) problems.push(...this.errors(validate, `${where}: body`));
        }
      }
    } else if (exchange.body !== undefined && exchange.method !== 'GET') {
      problems.push(`${where}: a body where the description takes none`);
    }
    return problems;
  }

  /** What is wrong with the answer the fake gave, by the description; empty when the cloud would answer so. */
  responseProblems(exchange: RecordedExchange): string[] {
    const operation = this.operationOf(exchange.method, exchange.path);
    if (!operation || exchange.status === null) return [];
    const where = `${operation.method} ${operation.path} → ${exchange.status}`;
    const responses = (operation.op.responses ?? {}) as Json;
    const status = String(exchange.status);
    const declared = responses[status] ? status : responses[`${status[0]}XX`] ? `${status[0]}XX` : exchange.status >= 400 && responses.default ? 'default' : null;
    if (!declared) {
      if (exchange.status < 400) return [`${where}: a status the operation does not declare (${Object.keys(responses).join(', ')})`];
      if (!this.options.errorSchema || exchange.answer === undefined) return [];
      const validate = this.validator(pointer('components', 'schemas', this.options.errorSchema));
      return validate(exchange.answer) ? [] : this.errors(validate, `${where}: error body`);
    }
    const response = this.resolve(responses[declared]);
    const media = Object.keys(response.content ?? {}).find((type) => type.startsWith('application/json'));
    if (!media || !response.content[media].schema || exchange.answer === undefined) return [];
    const validate = this.validator(pointer('paths', operation.path, operation.method.toLowerCase(), 'responses', declared, 'content', media, 'schema'));
    return validate(exchange.answer) ? [] : this.errors(validate, `${where}: body`);
  }

  private parameterPointer(operation: Operation, index: number): string {
    const own = (operation.op.parameters ?? []) as Json[];
    const shared = (this.doc.paths[operation.path].parameters ?? []) as Json[];
    const parameter = index < shared.length ? shared[index]! : own[index - shared.length]!;
    if (parameter.$ref) return `${parameter.$ref.slice(2)}/schema`;
    return index < shared.length
      ? pointer('paths', operation.path, 'parameters', String(index), 'schema')
      : pointer('paths', operation.path, operation.method.toLowerCase(), 'parameters', String(index - shared.length), 'schema');
  }

  private bodyPointer(operation: Operation, media: string): string {
    const ref = operation.op.requestBody.$ref as string | undefined;
    return ref ? `${ref.slice(2)}/content/${pointer(media)}/schema` : pointer('paths', operation.path, operation.method.toLowerCase(), 'requestBody', 'content', media, 'schema');
  }

  private securityProblems(operation: Operation, header: (name: string) => string | undefined): string[] {
    const requirements = (operation.op.security ?? this.doc.security ?? []) as Json[];
    if (requirements.length === 0 || requirements.some((r) => Object.keys(r).length === 0)) return [];
    const schemes = (this.doc.components?.securitySchemes ?? {}) as Json;
    const met = requirements.some((requirement) =>
      Object.keys(requirement).every((name) => {
        const scheme = schemes[name] as Json | undefined;
        if (!scheme) return false;
        if (scheme.type === 'http') return new RegExp(`^${scheme.scheme}\\s+\\S+`, 'i').test(header('authorization') ?? '');
        if (scheme.type === 'apiKey' && scheme.in === 'header') return (header(scheme.name) ?? '') !== '';
        return true;
      }),
    );
    return met ? [] : [`no credentials of the kind the description asks (${requirements.map((r) => Object.keys(r).join('+')).join(' or ')})`];
  }

  /** Every problem of every exchange, each line naming its request. */
  check(exchanges: readonly RecordedExchange[]): string[] {
    return exchanges.flatMap((exchange) => [...this.requestProblems(exchange), ...this.responseProblems(exchange)]);
  }
}
