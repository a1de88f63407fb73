import pg from 'pg';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import { time, timeOrNull, type Snapshot } from './snapshot.ts';

type Row = Record<string, any>;

/**
 * A tenant read straight from the database: PostgreSQL in one repeatable-read transaction (the sweep daemon and a
 * replica may write meanwhile: every table is read at the same moment), or a PGlite directory the server no longer
 * holds. `machines` comes from the fake cloud, read after it.
 */
export async function sqlSnapshot(
  target: string | { dataDir: string },
  tenantId: string,
  cappedTokenId: string | null,
  now: () => number,
  machines: () => Promise<Map<string, number>>,
): Promise<Snapshot> {
  let storage: MikroStorage | null = null;
  let client: pg.Client | null = null;
  if (typeof target === 'string') {
    client = new pg.Client({ connectionString: target });
    await client.connect();
    await client.query('begin isolation level repeatable read read only');
  } else {
    storage = await MikroStorage.open({ kind: 'pglite', dataDir: target.dataDir });
  }
  const query = async (sql: string, params: unknown[] = []): Promise<Row[]> => {
    if (storage) return storage.execute<Row[]>(sql, params);
    let n = 0;
    return (await client!.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as Row[];
  };
  try {
    // the snapshot's moment: its first statement
    const [account] = await query(`select balance_cents from accounts where tenant_id = ?`, [tenantId]);
    const at = now();
    const ledger = await query(`select kind, amount_cents, reference, created_at from ledger_entries where tenant_id = ? order by seq`, [tenantId]);
    const instances = await query(
      `select id, status, rate_cents_per_hour, charged_cents, created_at, paid_until, terminated_at, started_at, machine_id, idempotency_key, token_id
         from instances where tenant_id = ?`,
      [tenantId],
    );
    const usage = await query(`select id, unique_key, resource_kind, amount_cents, settled_at from usage_records where tenant_id = ?`, [tenantId]);
    const totals = await query(`select resource_kind, charged_cents from usage_totals where tenant_id = ?`, [tenantId]);
    const [token] = cappedTokenId ? await query(`select committed_cents from tokens where id = ?`, [cappedTokenId]) : [];
    const monthStart = new Date(at);
    const [spent] = await query(`select spent_cents from budget_spend where tenant_id = ? and month = ?::date`, [
      tenantId,
      `${monthStart.getUTCFullYear()}-${String(monthStart.getUTCMonth() + 1).padStart(2, '0')}-01`,
    ]);
    const events = await query(`select id from webhook_events where tenant_id = ?`, [tenantId]);
    return {
      now: at,
      balance: Number(account!.balance_cents),
      ledger: ledger.map((row) => ({ kind: String(row.kind), amount: Number(row.amount_cents), reference: row.reference ?? null, createdAt: time(row.created_at) })),
      instances: instances.map((row) => ({
        id: String(row.id),
        status: String(row.status),
        rate: Number(row.rate_cents_per_hour),
        charged: Number(row.charged_cents),
        createdAt: time(row.created_at),
        paidUntil: time(row.paid_until),
        terminatedAt: timeOrNull(row.terminated_at),
        startedAt: timeOrNull(row.started_at),
        machineId: row.machine_id ?? null,
        key: row.idempotency_key ?? null,
        tokenId: String(row.token_id),
      })),
      machines: await machines(),
      usage: usage.map((row) => ({
        id: String(row.id),
        key: String(row.unique_key).startsWith('key:') ? String(row.unique_key).slice(4) : null,
        kind: String(row.resource_kind),
        amount: Number(row.amount_cents),
        settled: row.settled_at !== null,
      })),
      usageCharged: new Map(totals.map((row) => [String(row.resource_kind), Number(row.charged_cents)])),
      capped: token ? { committed: Number(token.committed_cents), burn: null } : null,
      budgetSpent: spent ? Number(spent.spent_cents) : 0,
      events: events.map((row) => String(row.id)),
    };
  } finally {
    if (client) {
      await client.query('rollback').catch(() => undefined);
      await client.end();
    }
    await storage?.close();
  }
}

/** The ids of the tenant's events in the outbox (PostgreSQL). */
export async function eventIds(url: string, tenantId: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(`select id from webhook_events where tenant_id = $1`, [tenantId])).rows.map((row) => String(row.id));
  } finally {
    await client.end();
  }
}
