import { time, timeOrNull, type Snapshot } from './snapshot.ts';

/** An answer of the API; status 0 when none came (the process died). */
export interface Answer {
  status: number;
  body: any;
}

/** The most lines the ledger and usage lists answer at once: a longer list is read as incomplete. */
const PAGE = 1_000;
const INSTANCE_PAGE = 500;

/**
 * A tenant read through the API (the root token's view), for PGlite while its server runs: the directory belongs
 * to that process. What the API does not show (the machine an instance recorded, idempotency keys of usage records,
 * the outbox) is left undefined or null; a list as long as its page may be cut and is read as null.
 */
export async function apiSnapshot(get: (path: string) => Promise<Answer>, cappedTokenId: string | null, now: () => number, machines: () => Promise<Map<string, number>>): Promise<Snapshot | null> {
  const answers = await Promise.all(['/v1/billing/balance', `/v1/billing/ledger?limit=${PAGE}`, '/v1/instances', `/v1/metering/usage?limit=${PAGE}`, '/v1/tokens', '/v1/billing/budget'].map(get));
  if (answers.some((answer) => answer.status !== 200)) return null;
  const [balance, ledger, instances, usage, tokens, budget] = answers.map((answer) => answer.body) as any[];
  // the list answers the newest 500 at most: a charge of an older instance would read as a charge without one
  if (instances.length >= INSTANCE_PAGE) return null;
  const token = cappedTokenId ? (tokens as any[]).find((t) => t.id === cappedTokenId) : null;
  return {
    now: now(),
    balance: balance.balance_cents,
    ledger: ledger.length >= PAGE ? null : (ledger as any[]).map((line) => ({ kind: line.kind, amount: line.amount_cents, reference: line.reference, createdAt: time(line.created_at) })),
    instances: (instances as any[]).map((row) => ({
      id: row.id,
      status: row.status,
      rate: row.rate_cents_per_hour,
      charged: row.charged_cents,
      createdAt: time(row.created_at),
      paidUntil: time(row.paid_until),
      terminatedAt: timeOrNull(row.terminated_at),
      startedAt: timeOrNull(row.started_at),
      key: row.idempotency_key,
    })),
    machines: await machines(),
    usage: usage.length >= PAGE ? null : (usage as any[]).map((row) => ({ id: row.id, kind: row.resource_kind, amount: row.amount_cents, settled: row.settled_at !== null })),
    usageCharged: null,
    capped: token ? { committed: token.committed_cents, burn: token.burn_cents_per_hour } : null,
    budgetSpent: budget.spent_cents,
    events: null,
  };
}
