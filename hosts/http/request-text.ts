import type { FieldProblem } from '../../core/errors.ts';

/** Why PostgreSQL cannot keep this text as sent: it refuses NUL, and turns a lone surrogate into U+FFFD. */
export const textProblem = (text: string): string | null => {
  if (text.includes('\u0000')) return 'must not contain a NUL character (\\u0000)';
  if (!text.isWellFormed()) return 'must not contain a lone UTF-16 surrogate; send well-formed Unicode text';
  return null;
};

/** More problems than this are not worth listing: the caller fixes the first ones and tries again. */
const MAX_PROBLEMS = 20;

/**
 * Every string of a parsed request part (values and field names, at any depth) that the database could not
 * keep as sent. Iterative, so a deeply nested body cannot exhaust the stack.
 */
export function textProblems(value: unknown, root: (string | number)[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const pending: { value: unknown; loc: (string | number)[] }[] = [{ value, loc: root }];
  while (pending.length > 0 && problems.length < MAX_PROBLEMS) {
    const { value: current, loc } = pending.pop()!;
    if (typeof current === 'string') {
      const msg = textProblem(current);
      if (msg) problems.push({ loc, msg });
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], loc: [...loc, i] });
    } else if (current !== null && typeof current === 'object') {
      for (const [key, inner] of Object.entries(current).reverse()) {
        const msg = textProblem(key);
        if (msg) problems.push({ loc: [...loc, key], msg: `field name ${msg}` });
        else pending.push({ value: inner, loc: [...loc, key] });
      }
    }
  }
  return problems;
}
