/**
 * What a log needs of an unexpected error, without what the database echoed of the request: PostgreSQL puts
 * values in its messages (`invalid input syntax for type integer: "…"`) and in `detail`, `where` and
 * `internalQuery`; some drivers prefix the SQL text. Logs are read by more people than the data is.
 */
export interface LoggedError {
  type: string;
  message: string;
  /** SQLSTATE for a database error (e.g. 23505), or a Node/driver code such as ECONNREFUSED. */
  code?: string;
  /** Names from the schema, never data: which constraint, table or column. */
  constraint?: string;
  table?: string;
  column?: string;
  routine?: string;
  stack?: string;
  cause?: LoggedError;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;
const STATEMENT_PREFIX = /^\s*(select|insert|update|delete|with|begin|commit|rollback|alter|create|drop|lock|set)\b[\s\S]* - /i;

const isDatabaseError = (error: Record<string, unknown>): boolean =>
  (typeof error.code === 'string' && SQLSTATE.test(error.code)) || 'sqlState' in error || typeof error.severity === 'string';

/** Keeps the database's words and drops its quotations of data: `"…"` stands for each quoted value. */
const redact = (message: string): string => message.replace(STATEMENT_PREFIX, '').replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/\([^()]*\)=\([^()]*\)/g, '(…)=(…)');

/** Only the frames: a stack's first line repeats the message. */
const framesOf = (stack: unknown): string | undefined =>
  typeof stack === 'string'
    ? stack
        .split('\n')
        .filter((line) => line.trim().startsWith('at '))
        .join('\n')
    : undefined;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length <= 200 ? value : undefined);

export function loggableError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Error)) return { type: typeof error, message: 'a non-Error value was thrown' };
  const fields = error as unknown as Record<string, unknown>;
  const database = isDatabaseError(fields);
  const code = typeof fields.code === 'string' || typeof fields.code === 'number' ? String(fields.code) : undefined;
  const logged: LoggedError = {
    type: error.name,
    message: database ? redact(error.message) : error.message,
    ...(code && { code }),
    ...(database && text(fields.constraint) && { constraint: text(fields.constraint) }),
    ...(database && text(fields.table) && { table: text(fields.table) }),
    ...(database && text(fields.column) && { column: text(fields.column) }),
    ...(database && text(fields.routine) && { routine: text(fields.routine) }),
  };
  const stack = framesOf(error.stack);
  if (stack) logged.stack = stack;
  if (error.cause !== undefined && depth < 3) logged.cause = loggableError(error.cause, depth + 1);
  return logged;
}
