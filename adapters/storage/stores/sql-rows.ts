/** Values as the PostgreSQL drivers hand them back: bigint may come as text, timestamps as Date or text. */
export const num = (value: unknown): number => {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`not a safe integer from the database: ${String(value)}`);
  return n;
};

export const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : num(value));

export const date = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));

export const dateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : date(value));

export const textOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

export type Row = Record<string, unknown>;

/**
 * A text[] parameter as PostgreSQL's array literal: MikroORM's raw `execute` spreads a JS array into
 * several placeholders, so arrays travel as one literal and are cast with `::text[]`.
 */
export const textArray = (values: readonly string[]): string =>
  `{${values.map((value) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
