import pg from 'pg';
import { databaseUnavailable, DomainError } from '../../core/errors.ts';

/** DATABASE_TIMEOUT_MS by default: longest a connection, a free slot in the pool or one statement is waited for. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 5_000;

/** What a statement cut by the deadline fails with (also how `isConnectionFailure` knows it). */
const NO_ANSWER = 'the database did not answer within';

/**
 * A pg client whose every statement has a deadline: past it the connection is destroyed, not left waiting. pg's own
 * `query_timeout` fails the statement but keeps the connection, whose next statement (the ROLLBACK) then waits as
 * long again on a server that does not answer (docs/decisions.md, "Database outages answer 503").
 */
/** The statement deadline, read at each statement: 0 (none) while migrations run, DATABASE_TIMEOUT_MS after. */
export interface StatementDeadline {
  ms: number;
}

export function deadlineClient(deadline: StatementDeadline): typeof pg.Client {
  return class DeadlineClient extends pg.Client {
    #release: ((error?: Error) => void) | null = null;

    constructor(...args: ConstructorParameters<typeof pg.Client>) {
      super(...args);
      // Kysely neither releases a connection whose BEGIN failed nor one whose COMMIT and ROLLBACK failed: a dead
      // connection checked out when it died would stay out of the pool for good, and an outage would leave the pool
      // empty after the database came back. Its end hands it back (the pool then discards it); a later release is a no-op.
      this.once('end', () => this.#release?.(new Error('the connection ended')));
    }

    /** What pg-pool sets on each checkout, made safe to call twice. */
    get release(): ((error?: Error) => void) | undefined {
      return this.#release ?? undefined;
    }

    set release(poolRelease: ((error?: Error) => void) | undefined) {
      let released = false;
      this.#release = poolRelease
        ? (error) => {
            if (released) return;
            released = true;
            poolRelease(error);
          }
        : null;
    }

    override query(...args: unknown[]): never {
      const result = (super.query as (...all: unknown[]) => unknown)(...args);
      // a cursor or a callback query: the pool's and the connection's deadlines still hold
      const timeoutMs = deadline.ms;
      if (!(result instanceof Promise) || timeoutMs <= 0) return result as never;
      const timer = setTimeout(() => {
        const stream = (this as unknown as { connection: { stream: { destroy(error: Error): void } } }).connection.stream;
        stream.destroy(new Error(`${NO_ANSWER} ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      return result.finally(() => clearTimeout(timer)) as never;
    }
  };
}

/** Pool settings every pool and lone client on PostgreSQL gets, besides its size. */
export const deadlineOptions = (timeoutMs: number, statements: StatementDeadline) => ({
  // connecting (a frozen server accepts TCP and never answers the startup) and waiting for a free pooled connection
  connectionTimeoutMillis: timeoutMs,
  keepAlive: true,
  Client: deadlineClient(statements),
});

/** Node's codes for a connection refused, reset or unreachable. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** SQLSTATEs of a server going away or not taking sessions: admin/crash shutdown, starting up, too many connections. */
const SERVER_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** pg's and pg-pool's words for a connection ended, cut, never made, or a pool with no free slot in time. */
const DRIVER_MESSAGES = [NO_ANSWER, 'Connection terminated', 'timeout exceeded when trying to connect', 'not queryable', 'timeout expired', 'Query read timeout'];

/**
 * Whether `error` says the database could not be reached rather than that a statement was wrong: the driver's
 * connection errors, the pool's acquisition timeout and the deadlines above, however MikroORM wrapped them.
 */
export function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  const fields = error as { code?: unknown; sqlState?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const code = typeof fields.sqlState === 'string' ? fields.sqlState : typeof fields.code === 'string' ? fields.code : '';
  if (NETWORK_CODES.has(code) || SERVER_STATES.has(code) || code.startsWith('08')) return true;
  if (typeof fields.message === 'string' && DRIVER_MESSAGES.some((words) => (fields.message as string).includes(words))) return true;
  if (Array.isArray(fields.errors) && fields.errors.some((inner) => isConnectionFailure(inner, depth + 1))) return true;
  return isConnectionFailure(fields.cause, depth + 1);
}

/** Runs `work`; a connection failure leaves it as DATABASE_UNAVAILABLE (503 over HTTP), anything else as it was. */
export async function mapOutage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw !(error instanceof DomainError) && isConnectionFailure(error) ? databaseUnavailable(error) : error;
  }
}
