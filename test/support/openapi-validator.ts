import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Checks an answer against the OpenAPI document the server serves: the status is one the operation declares
 * (or its `default`), the content type one declared for it, the JSON body valid against its schema (ajv, JSON
 * Schema 2020-12, formats checked), and every header declared `required` present and valid. A drift between
 * the document and the server is a failure naming the request. Requests to paths the document does not
 * describe (POST /mcp, the console, an unknown path, a method a path does not take) are not its business.
 */
export interface AnswerToCheck {
  method: string;
  /** The path as sent, with its query. */
  url: string;
  status: number;
  headers: Headers;
  /** The parsed JSON, or the text when it is not JSON; undefined for an empty body. */
  body: unknown;
}

type Json = Record<string, any>;

const DOC_ID = 'https://gpu-control-plane.invalid/openapi.json';
const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

interface Operation {
  path: string;
  method: string;
  pattern: RegExp;
  op: Json;
}

export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[];
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly doc: Json;

  constructor(doc: Json) {
    this.doc = doc;
    // OpenAPI's own keywords (example, discriminator...) are not JSON Schema's: not strict about them
    // multipleOf in floating point says 19.99 is no multiple of 0.01 (19.99 / 0.01 = 1998.9999999999998): a quotient
    // within 1e-9 of a whole number is one, as a decimal reading of the JSON number would find
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, multipleOfPrecision: 9 });
    addFormats.default(this.ajv);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
    this.operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({
        path,
        method: method.toUpperCase(),
        // as the router matches: case-insensitive, an optional trailing slash
        pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[a-z_]+\\?\}/g, '[^/]+')}/?$`, 'i'),
        op,
      })),
    );
  }

  private validator(ref: string): ValidateFunction {
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}#/${ref}` });
      this.compiled.set(ref, validate);
    }
    return validate;
  }

  /** The problems with an answer, empty when it is what the document says. */
  problems(answer: AnswerToCheck): string[] {
    const path = answer.url.split('?')[0]!;
    const method = answer.method.toUpperCase() === 'HEAD' ? 'GET' : answer.method.toUpperCase();
    const operation = this.operations.find((o) => o.method === method && o.pattern.test(path));
    if (!operation) return [];
    const status = String(answer.status);
    const declared = operation.op.responses[status] ? status : answer.status >= 500 && operation.op.responses.default ? 'default' : null;
    if (!declared) return [`${answer.status} is not a status ${operation.method} ${operation.path} declares (${Object.keys(operation.op.responses).join(', ')})`];
    const response = operation.op.responses[declared] as Json;
    const problems: string[] = [];
    for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const spec = header.$ref ? this.doc.components.headers[header.$ref.split('/').at(-1)] : header;
      const value = answer.headers.get(name);
      if (value === null) {
        if (spec.required) problems.push(`the ${name} header is missing`);
        continue;
      }
      const typed = spec.schema?.type === 'integer' || spec.schema?.type === 'number' ? Number(value) : value;
      const headerRef = header.$ref ? pointer('components', 'headers', header.$ref.split('/').at(-1), 'schema') : pointer('paths', operation.path, operation.method.toLowerCase(), 'responses', declared, 'headers', name, 'schema');
      const validate = this.validator(headerRef);
      if (!validate(typed)) problems.push(`the ${name} header ${JSON.stringify(value)}: ${this.ajv.errorsText(validate.errors)}`);
    }
    const content = (response.content ?? {}) as Record<string, Json>;
    if (answer.method.toUpperCase() === 'HEAD' || answer.body === undefined) return problems;
    const type = answer.headers.get('content-type') ?? '';
    const media = Object.keys(content).find((declaredType) => type.startsWith(declaredType.split(';')[0]!));
    if (!media) {
      problems.push(`content type ${JSON.stringify(type)} is not declared for ${declared} (${Object.keys(content).join(', ') || 'no body'})`);
      return problems;
    }
    if (!media.startsWith('application/json')) return problems;
    const validate = this.validator(pointer('paths', operation.path, operation.method.toLowerCase(), 'responses', declared, 'content', media, 'schema'));
    if (!validate(answer.body)) {
      problems.push(...(validate.errors ?? []).slice(0, 10).map((error) => `body${error.instancePath} ${error.message}${error.params ? ` ${JSON.stringify(error.params)}` : ''}`));
    }
    return problems;
  }

  /** Whether `value` is valid against one schema of the document (inline, as found in it). */
  valid(schema: Json, value: unknown): boolean {
    return this.ajv.validate(schema, value) as boolean;
  }

  /** Throws when the answer is not what the document says: the test that made the request fails, naming it. */
  check(answer: AnswerToCheck): void {
    const problems = this.problems(answer);
    if (problems.length > 0) {
      const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      throw new Error(
        `${answer.method} ${answer.url} answered ${answer.status}, which /openapi.json does not describe:\n  ${problems.join('\n  ')}\n  body: ${(body ?? '').slice(0, 500)}`,
      );
    }
  }
}
