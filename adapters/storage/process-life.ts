import { DEFAULT_DATABASE_TIMEOUT_MS, deadlineClient } from './database-deadline.ts';

/**
 * A process's life as PostgreSQL sees it (docs/decisions.md, "Crash anywhere, lose nothing"): a session of its own
 * holds an advisory lock named after the process's holder id for as long as the process lives. A process killed
 * (even by SIGKILL) loses its connection and so its lock at once; another process that can take the lock knows it
 * dead. A connection dropped while the process lives is opened again, its lock taken again.
 */
export class ProcessLife {
  private client: InstanceType<ReturnType<typeof deadlineClient>> | null = null;
  private closed = false;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private readonly url: string;
  private readonly key: string;
  private readonly timeoutMs: number;

  private constructor(url: string, key: string, timeoutMs: number | undefined) {
    this.url = url;
    this.key = key;
    this.timeoutMs = timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
  }

  static async hold(url: string, key: string, timeoutMs?: number): Promise<ProcessLife> {
    const life = new ProcessLife(url, key, timeoutMs);
    await life.connect();
    return life;
  }

  private async connect(): Promise<void> {
    const Client = deadlineClient({ ms: this.timeoutMs });
    const client = new Client({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: this.timeoutMs, application_name: 'gpu-control-plane process' });
    client.on('error', () => this.lost(client));
    await client.connect();
    await client.query('select pg_advisory_lock($1)', [this.key]);
    this.client = client;
  }

  private lost(client: unknown): void {
    if (this.closed || this.client !== client) return;
    this.client = null;
    this.again();
  }

  private again(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect().catch(() => this.again());
    }, 1_000);
    this.retry.unref?.();
  }

  async release(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }
}
