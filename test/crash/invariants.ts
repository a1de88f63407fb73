import { usageCents, type Model } from './model.ts';
import { LIVE, type InstanceRow, type Line, type Snapshot } from './snapshot.ts';

const HOUR = 3_600_000;

/** The test's own price of an instance from its times (docs/decisions.md, "Accounts, ledger, rentals"). */
function expectedCharge(row: InstanceRow): number {
  if (row.status === 'failed') return 0;
  if (LIVE.has(row.status)) return row.rate * Math.round((row.paidUntil - row.createdAt) / HOUR);
  if (row.startedAt === null) return 0;
  const minutes = Math.ceil((row.terminatedAt! - row.createdAt) / 60_000);
  return Math.ceil((row.rate * Math.max(60, minutes)) / 60);
}

/** What a month's budget counts: each thing's charges in it less what was refunded for it in it (docs/decisions.md, budgets). */
function netChargesOfMonth(ledger: readonly Line[], at: number): number {
  const month = (ms: number) => new Date(ms).toISOString().slice(0, 7);
  const charged = new Map<string | null, number>();
  const refunded = new Map<string | null, number>();
  for (const line of ledger) {
    if (month(line.createdAt) !== month(at)) continue;
    if ((line.kind === 'rental_hour' || line.kind === 'usage') && line.amount < 0) charged.set(line.reference, (charged.get(line.reference) ?? 0) - line.amount);
    if (line.kind === 'refund' && line.amount > 0) refunded.set(line.reference, (refunded.get(line.reference) ?? 0) + line.amount);
  }
  let net = 0;
  for (const [reference, cents] of charged) net += cents - Math.min(cents, reference === null ? 0 : (refunded.get(reference) ?? 0));
  return net;
}

export interface CheckOptions {
  /** Read after a pass that completed: nothing upstream without its instance, no block left behind. */
  afterPass: boolean;
  /** The end of the run: every retried key answered, two passes made, usage settled, events delivered. */
  final?: boolean;
  /** When the process killed last was started again: a create that died before it is taken up by the first pass. */
  processStartedAt?: number;
}

/**
 * Checks the invariants of the crash test on a snapshot (snapshot.ts) against the test's model; answers how many it
 * checked. The ledger sums to the balance; no charge without an instance; each instance charged what its times say,
 * and its ledger lines say the same (no hour block charged twice or skipped); one instance per key, the key answering
 * the same; a quote rents once; a paid checkout credited once; each usage record once per key, charged once, the
 * ledger and the running total agreeing; the capped token's commitment what its instances hold, within its cap and
 * burn ceiling; the budget's spent figure the month's net charges; after a pass, no machine without a live instance,
 * none failed with one and none running without one; at the end, the balance the model computes and every event
 * delivered.
 */
export function checkSnapshot(snapshot: Snapshot, model: Model, violation: (what: string) => void, options: CheckOptions): number {
  let checked = 0;
  const check = (ok: boolean, what: () => string) => {
    checked++;
    if (!ok) violation(what());
  };
  const { ledger, instances, machines, now } = snapshot;
  const ledgerOf = new Map<string, number>();
  if (ledger) {
    const sum = ledger.reduce((total, line) => total + line.amount, 0);
    check(sum === snapshot.balance, () => `balance ${snapshot.balance} but the ledger sums to ${sum}`);
    for (const line of ledger) if (line.reference) ledgerOf.set(line.reference, (ledgerOf.get(line.reference) ?? 0) + line.amount);
    const ids = new Set(instances.map((row) => row.id));
    const stray = ledger.filter((line) => line.reference?.startsWith('ins') && !ids.has(line.reference));
    check(stray.length === 0, () => `${stray.length} ledger lines charge an instance that does not exist (${stray[0]?.reference})`);
  }
  const byKey = new Map<string, InstanceRow>();
  let expectedCharges = 0;
  for (const row of instances) {
    const expected = expectedCharge(row);
    expectedCharges += expected;
    if (ledger) check(-(ledgerOf.get(row.id) ?? 0) === row.charged, () => `${row.id} (${row.status}): charged ${row.charged} but its ledger lines say ${-(ledgerOf.get(row.id) ?? 0)}`);
    check(row.charged === expected, () => `${row.id} (${row.status}): charged ${row.charged}, its times say ${expected}`);
    if (LIVE.has(row.status)) check((row.paidUntil - row.createdAt) % HOUR === 0, () => `${row.id}: paid to a time that is not a block's end`);
    if (row.key) {
      check(!byKey.has(row.key), () => `key ${row.key} has two instances`);
      byKey.set(row.key, row);
    }
    const upstream = machines.get(row.id) ?? 0;
    check(upstream <= 1, () => `${row.id} has ${upstream} machines upstream`);
    if (options.afterPass && row.status === 'failed') check(upstream === 0, () => `${row.id} failed but its machine is still upstream after a pass`);
    if (options.afterPass && row.status === 'running') {
      check(upstream === 1, () => `${row.id} is running (charged) with no machine upstream after a pass`);
      // a pass at `now` pays every block due by then: none is left behind
      check(row.paidUntil > now - 120_000, () => `${row.id}: paid until ${new Date(row.paidUntil).toISOString()}, behind the pass at ${new Date(now).toISOString()}`);
    }
    // without the machine recorded (the API), a machine upstream stands for it: the pass adopts it
    const noMachine = row.machineId === undefined ? upstream === 0 : row.machineId === null;
    if (options.afterPass && options.processStartedAt !== undefined && row.status === 'provisioning' && noMachine && row.createdAt < options.processStartedAt) {
      // its create died with an earlier process: the first pass after the restart takes it up, not the deadline
      check(false, () => `${row.id}: its create died with its process, and it is still provisioning with no machine after a pass`);
    }
    if (options.final && row.status === 'provisioning') check(!noMachine, () => `${row.id} is still provisioning with no machine after two passes`);
  }
  if (options.afterPass) {
    const live = new Set(instances.filter((row) => LIVE.has(row.status)).map((row) => row.id));
    for (const label of machines.keys()) check(live.has(label), () => `machine ${label} runs upstream with no live instance after a pass`);
  }
  for (const [key, first] of model.firstAnswers) {
    const row = byKey.get(key);
    if (first.status === 201 || first.status === 200) check(row?.id === first.id, () => `key ${key} answered ${first.id}, its instance is ${row?.id}`);
  }
  const byQuote = new Map<string, number>();
  for (const [key, quote] of model.quoteKeys) if (byKey.has(key)) byQuote.set(quote, (byQuote.get(quote) ?? 0) + 1);
  for (const [quote, n] of byQuote) check(n <= 1, () => `quote ${quote} rented ${n} times`);
  const deposits = new Map<string, number>();
  for (const line of ledger ?? []) if (line.kind === 'deposit') deposits.set(String(line.reference), (deposits.get(String(line.reference)) ?? 0) + 1);
  for (const [reference, n] of deposits) check(n === 1, () => `deposit ${reference} credited ${n} times`);
  const settledUsage = checkUsage(snapshot, model, check, ledgerOf, options);
  checkCaps(snapshot, model, check, byKey);
  if (ledger && snapshot.budgetSpent !== null) {
    const net = netChargesOfMonth(ledger, now);
    check(snapshot.budgetSpent === net, () => `the budget says ${snapshot.budgetSpent} cents spent this month; the month's net charges are ${net}`);
  }
  if (options.final) {
    const paid = [...model.paidCheckouts.values()].reduce((sum, cents) => sum + cents, 0);
    if (ledger) {
      const creditedByCard = ledger.filter((line) => line.kind === 'deposit').reduce((sum, line) => sum + line.amount, 0);
      check(creditedByCard === paid, () => `the card payments credited ${creditedByCard} cents; the payer paid ${paid}`);
    }
    const modelled = model.creditedCents + paid - expectedCharges - settledUsage;
    check(snapshot.balance === modelled, () => `the balance is ${snapshot.balance}; the model says ${modelled}`);
    if (snapshot.events) {
      const lost = snapshot.events.filter((id) => !model.eventsReceived.has(id));
      check(lost.length === 0, () => `${lost.length} of ${snapshot.events!.length} committed events never reached the endpoint (${lost.slice(0, 3).join(', ')})`);
    }
  }
  return checked;
}

/** Usage: each key recorded once, each record charged once in the ledger, the totals one rounding of what was sent. Answers what was settled. */
function checkUsage(snapshot: Snapshot, model: Model, check: (ok: boolean, what: () => string) => void, ledgerOf: Map<string, number>, options: CheckOptions): number {
  const { usage, ledger } = snapshot;
  if (!usage) return 0;
  const keys = new Map<string, number>();
  let total = 0;
  let settled = 0;
  for (const record of usage) {
    total += record.amount;
    if (record.settled) settled += record.amount;
    if (record.key) keys.set(record.key, (keys.get(record.key) ?? 0) + 1);
    if (ledger) {
      const posted = -(ledgerOf.get(record.id) ?? 0);
      check(posted === (record.settled ? record.amount : 0), () => `usage ${record.id} (${record.settled ? 'settled' : 'owed'}, ${record.amount} cents): the ledger charged ${posted}`);
    }
  }
  for (const [key, n] of keys) check(n === 1 && model.usage.has(key), () => `usage key ${key} recorded ${n} times${model.usage.has(key) ? '' : ', never sent'}`);
  for (const [kind, charged] of snapshot.usageCharged ?? []) {
    const sum = usage.filter((record) => record.kind === kind).reduce((s, record) => s + record.amount, 0);
    check(sum === charged, () => `${kind}: its records add up to ${sum} cents, its running total charged ${charged}`);
  }
  if (options.final) {
    check(usage.length === model.usage.size, () => `${usage.length} usage records for ${model.usage.size} keys sent`);
    const expected = usageCents(model);
    check(total === expected, () => `usage charged ${total} cents; what was sent costs ${expected}`);
    check(settled === total, () => `${total - settled} cents of usage still owed after the last settlement`);
  }
  return settled;
}

/** The capped token: committed what its live instances hold for their windows and what its ended ones cost, within cap and ceiling. */
function checkCaps(snapshot: Snapshot, model: Model, check: (ok: boolean, what: () => string) => void, byKey: Map<string, InstanceRow>): void {
  if (!model.capped || !snapshot.capped) return;
  const { committed, burn } = snapshot.capped;
  const { capCents, burnCeilingCents, id } = model.capped;
  check(committed <= capCents, () => `the capped token committed ${committed} cents, over its cap of ${capCents}`);
  if (burn !== null) check(burn <= burnCeilingCents, () => `the capped token burns ${burn} cents an hour, over its ceiling of ${burnCeilingCents}`);
  // its instances: by the token recorded (the database), or by the keys it rented with, when every one is known
  const mine = snapshot.instances.some((row) => row.tokenId !== undefined)
    ? snapshot.instances.filter((row) => row.tokenId === id)
    : [...model.cappedKeys.keys()].map((key) => byKey.get(key)).filter((row): row is InstanceRow => row !== undefined);
  const known = snapshot.instances.some((row) => row.tokenId !== undefined) || [...model.cappedKeys.keys()].every((key) => model.firstAnswers.has(key));
  if (!known) return;
  const holds = mine.reduce((sum, row) => sum + (LIVE.has(row.status) ? row.rate * (model.cappedKeys.get(row.key ?? '') ?? 0) : row.charged), 0);
  check(committed === holds, () => `the capped token committed ${committed} cents; its live instances' windows and its ended ones' charges make ${holds}`);
  const burning = mine.filter((row) => LIVE.has(row.status)).reduce((sum, row) => sum + row.rate, 0);
  if (burn !== null) check(burn === burning, () => `the capped token burns ${burn} cents an hour; its live instances cost ${burning}`);
}
