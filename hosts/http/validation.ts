import type { z } from 'zod';
import { DomainError, type FieldProblem } from '../../core/errors.ts';
import { textProblems } from './request-text.ts';

type Part = 'body' | 'query' | 'path';

const describe = (problems: FieldProblem[]): string =>
  problems
    .slice(0, 5)
    .map((p) => `${p.loc.join('.')}: ${p.msg}`)
    .join('; ') + (problems.length > 5 ? `; and ${problems.length - 5} more` : '');

/** A query parameter sent twice (`?limit=1&limit=2`) arrives as an array: say so rather than "expected string". */
const repeatedParameters = (query: unknown): FieldProblem[] =>
  Object.entries(query && typeof query === 'object' ? query : {})
    .filter(([, value]) => Array.isArray(value))
    .map(([name, value]) => ({ loc: ['query', name], msg: `given more than once (${(value as unknown[]).length} times); send it once` }));

/**
 * Parses one part of a request; a failure becomes INVALID_INPUT naming every field to fix. Checks that hold for
 * every route come first: each parameter once, and only text the database can store as sent.
 */
export function parsePart<S extends z.ZodType>(schema: S, value: unknown, part: Part): z.output<S> {
  const refused = [...(part === 'query' ? repeatedParameters(value) : []), ...textProblems(value, [part])];
  if (refused.length > 0) throw new DomainError('INVALID_INPUT', describe(refused), refused);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems: FieldProblem[] = result.error.issues.map((issue) => {
    const loc: (string | number)[] = [part, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))];
    let msg = issue.message;
    if (issue.code === 'invalid_type' && issue.path.length === 0 && part === 'body') {
      msg = 'the request body must be a JSON object; send Content-Type: application/json';
    } else if (issue.code === 'unrecognized_keys') {
      msg = `unknown field(s): ${issue.keys.join(', ')}`;
    }
    return { loc, msg };
  });
  throw new DomainError('INVALID_INPUT', describe(problems), problems);
}
