import pg from 'pg';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';

/** What the test itself knows happened, independent of the server's records. */
export interface Model {
  /** Operator credits made. */
  creditedCents: number;
  /** Each idempotency key's first answer (an answer the kill cut is not one). */
  firstAnswers: Map<string, { status: number; id: string | null }>;
  /** Keys that rented by a quote, and the quote. */
  quoteKeys: Map<string, string>;
  /** Checkout sessions the payer paid, and their amount in cents. */
  paidCheckouts: Map<string, number>;
}

const HOUR = 3_600_000;
const LIVE = new Set(['provisioning', 'running', 'rebooting']);

/** The test's own price of an instance from its row's times (docs/decisions.md, "Accounts, ledger, rentals"). */
function expectedCharge(row: Row): number {
  const rate = Number(row.rate);
  if (row.status === 'failed') return 0;
  if (LIVE.has(row.status)) return rate * Math.round((time(row.paid_until) - time(row.created_at)) / HOUR);
  if (row.started_at === null) return 0;
  const minutes = Math.ceil((time(row.terminated_at) - time(row.created_at)) / 60_000);
  return Math.ceil((rate * Math.max(60, minutes)) / 60);
}

type Row = Record<string, any>;
const time = (value: unknown): number => (value instanceof Date ? value.getTime() : new Date(String(value)).getTime());

/**
 * Checks the invariants of the crash test against the database, read directly; answers how many it checked. Every
 * ledger sums to its balance; no charge without an instance; each instance charged what its times say, and its
 * ledger lines say the same (no hour block charged twice or skipped); one instance per key; a quote rents once; a
 * paid checkout credited at most once (exactly once at the end); after a completed pass, no machine without a live
 * instance and no running instance without its machine; at the end, the balance is what the model says.
 */
export async function checkInvariants(
  target: string | { dataDir: string },
  model: Model,
  tenantId: string,
  offsetMs: number,
  violation: (what: string) => void,
  options: { afterPass: boolean; final?: boolean; processStartedAt?: number },
): Promise<number> {
  let storage: MikroStorage | null = null;
  let client: pg.Client | null = null;
  if (typeof target === 'string') {
    client = new pg.Client({ connectionString: target });
    await client.connect();
  } else {
    storage = await MikroStorage.open({ kind: 'pglite', dataDir: target.dataDir });
  }
  const query = async (sql: string, params: unknown[] = []): Promise<Row[]> => {
    if (storage) return storage.execute<Row[]>(sql, params);
    let n = 0;
    return (await client!.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as Row[];
  };
  let checked = 0;
  const check = (ok: boolean, what: () => string) => {
    checked++;
    if (!ok) violation(what());
  };
  try {
    const now = Date.now() + offsetMs;
    for (const row of await query(`select a.tenant_id, a.balance_cents, coalesce((select sum(amount_cents) from ledger_entries l where l.tenant_id = a.tenant_id), 0) as total from accounts a`)) {
      check(Number(row.balance_cents) === Number(row.total), () => `tenant ${row.tenant_id}: balance ${row.balance_cents} but its ledger sums to ${row.total}`);
    }
    const [stray] = await query(`select count(*) as n from ledger_entries l where l.reference like 'ins%' and not exists (select 1 from instances i where i.id = l.reference)`);
    check(Number(stray!.n) === 0, () => `${stray!.n} ledger lines charge an instance that does not exist`);
    const instances = await query(
      `select i.id, i.status, i.rate_cents_per_hour as rate, i.charged_cents, i.created_at, i.paid_until, i.terminated_at, i.started_at, i.machine_id, i.idempotency_key,
              coalesce((select -sum(amount_cents) from ledger_entries l where l.reference = i.id), 0) as ledger
         from instances i where i.tenant_id = ?`,
      [tenantId],
    );
    const machines = await query(`select label, count(*) as n from sandbox_machines where terminated_at_ms is null and label is not null group by label`);
    const machinesOf = new Map(machines.map((m) => [String(m.label), Number(m.n)]));
    const byKey = new Map<string, Row>();
    let expectedCharges = 0;
    for (const row of instances) {
      const expected = expectedCharge(row);
      expectedCharges += expected;
      check(Number(row.ledger) === Number(row.charged_cents), () => `${row.id} (${row.status}): charged ${row.charged_cents} but its ledger lines say ${row.ledger}`);
      check(Number(row.charged_cents) === expected, () => `${row.id} (${row.status}): charged ${row.charged_cents}, its times say ${expected}`);
      if (LIVE.has(row.status)) check((time(row.paid_until) - time(row.created_at)) % HOUR === 0, () => `${row.id}: paid to a time that is not a block's end`);
      if (row.idempotency_key) {
        check(!byKey.has(row.idempotency_key), () => `key ${row.idempotency_key} has two instances`);
        byKey.set(row.idempotency_key, row);
      }
      check((machinesOf.get(row.id) ?? 0) <= 1, () => `${row.id} has ${machinesOf.get(row.id)} machines`);
      if (row.status === 'failed') check(!machinesOf.has(row.id) || !options.afterPass, () => `${row.id} failed but its machine is still there after a pass`);
      if (options.afterPass && row.status === 'running') {
        check(machinesOf.has(row.id), () => `${row.id} is running (charged) with no machine after a pass`);
        // a pass at `now` pays every block due by then: none is left behind
        check(time(row.paid_until) > now - 120_000, () => `${row.id}: paid until ${new Date(time(row.paid_until)).toISOString()}, behind the pass at ${new Date(now).toISOString()}`);
      }
      if (options.afterPass && options.processStartedAt !== undefined && row.status === 'provisioning' && row.machine_id === null && time(row.created_at) < options.processStartedAt) {
        // its create died with an earlier process: the first pass after the restart takes it up, not the deadline
        check(false, () => `${row.id}: its create died with its process, and it is still provisioning with no machine after a pass`);
      }
      if (options.final && row.status === 'provisioning') check(row.machine_id !== null, () => `${row.id} is still provisioning with no machine after two passes`);
    }
    if (options.afterPass) {
      const live = new Set(instances.filter((row) => LIVE.has(row.status)).map((row) => String(row.id)));
      for (const label of machinesOf.keys()) check(live.has(label), () => `machine ${label} runs with no live instance after a pass`);
    }
    for (const [key, first] of model.firstAnswers) {
      const row = byKey.get(key);
      if (first.status === 201 || first.status === 200) check(row?.id === first.id, () => `key ${key} answered ${first.id}, its instance is ${row?.id}`);
    }
    const byQuote = new Map<string, number>();
    for (const [key, quote] of model.quoteKeys) if (byKey.has(key)) byQuote.set(quote, (byQuote.get(quote) ?? 0) + 1);
    for (const [quote, n] of byQuote) check(n <= 1, () => `quote ${quote} rented ${n} times`);
    const credits = await query(`select reference, count(*) as n, sum(amount_cents) as total from ledger_entries where tenant_id = ? and kind = 'deposit' group by reference`, [tenantId]);
    for (const row of credits) check(Number(row.n) === 1, () => `deposit ${row.reference} credited ${row.n} times`);
    if (options.final) {
      const paid = [...model.paidCheckouts.values()].reduce((sum, cents) => sum + cents, 0);
      const creditedByCard = credits.reduce((sum, row) => sum + Number(row.total), 0);
      check(creditedByCard === paid, () => `the card payments credited ${creditedByCard} cents; the payer paid ${paid}`);
      const [account] = await query(`select balance_cents from accounts where tenant_id = ?`, [tenantId]);
      const modelled = model.creditedCents + paid - expectedCharges;
      check(Number(account!.balance_cents) === modelled, () => `the balance is ${account!.balance_cents}; the model says ${modelled}`);
    }
  } finally {
    await client?.end();
    await storage?.close();
  }
  return checked;
}
