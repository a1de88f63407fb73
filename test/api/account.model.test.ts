import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * A model-based test of one account over real HTTP: random sequences of deposits, credits, rentals (some with
 * managed recovery), terminations, removals, machines lost or taken back at the sandbox, sweeps, stops, holds,
 * monthly budgets and clock moves, and rentals and heartbeats of an agent's token with an idle timeout (its
 * dead-man switch). After every step the books must hold, recovered machines and their replacements included, and
 * a budget's month must be what the ledger charged in it.
 */
const AGENT_IDLE_MINUTES = 45;
let world: RentalWorld;
let nodeIds: string[];
beforeAll(async () => {
  world = await rentalWorld({}, { sandbox: { offers: 2_000 } });
  nodeIds = (await world.offers((o) => o.rate >= 30 && o.rate <= 400 && o.available > 0)).map((o) => o.id);
});
afterAll(() => world.close());

interface Model {
  instances: string[];
  /** Those rented by the agent's token. */
  agentInstances: string[];
  /** Those a person may have ended (terminate, stop, hold): at their time, which may be after the agent's deadline. */
  endedByHand: Set<string>;
  /** Those with managed recovery (replacements included): the sandbox's chaos is aimed at them first. */
  recovering: string[];
}

interface Real {
  token: string;
  tenantId: string;
  seen: Map<string, string>;
  agent: { token: string; id: string };
}

/** What the ledger charged in the calendar month (UTC) of `now`: what a budget counts (refunds not subtracted). */
/** What the month's budget counts (docs/decisions.md, "Monthly budgets"): charges less what was refunded for the same thing that month. */
const chargedThisMonth = (ledger: any[], now: Date): number => {
  const month = ledger.filter((e) => e.created_at.slice(0, 7) === now.toISOString().slice(0, 7));
  const charged = new Map<string, number>();
  const refunded = new Map<string, number>();
  for (const e of month) {
    if ((e.kind === 'rental_hour' || e.kind === 'usage') && e.amount_cents < 0) charged.set(e.reference, (charged.get(e.reference) ?? 0) - e.amount_cents);
    if (e.kind === 'refund' && e.amount_cents > 0 && e.reference) refunded.set(e.reference, (refunded.get(e.reference) ?? 0) + e.amount_cents);
  }
  let total = [...charged.values()].reduce((sum, cents) => sum + cents, 0);
  for (const [reference, cents] of refunded) total -= Math.min(cents, charged.get(reference) ?? 0);
  return Math.max(0, total);
};

async function checkBooks(model: Model, real: Real, afterSweep: boolean): Promise<void> {
  const { api } = world;
  // what a budget's charge decided after its commit (a stop, the mail) is done before the books are read
  await api.plane.services.budgetWatch.idle();
  const ledger: any[] = (await api.call('GET', '/v1/billing/ledger?limit=1000', { token: real.token })).body;
  const account = (await api.call('GET', '/v1/billing/account', { token: real.token })).body;
  // the ledger sums to the balance
  expect(ledger.reduce((s, e) => s + e.amount_cents, 0)).toBe(account.balance_cents);
  // no entry ever changes
  for (const entry of ledger) {
    const text = JSON.stringify(entry);
    const before = real.seen.get(entry.id);
    if (before !== undefined) expect(text).toBe(before);
    real.seen.set(entry.id, text);
  }
  expect(ledger.length).toBe(real.seen.size);
  // nothing is charged twice: an instance's entries are exactly what it says it cost
  const instances: any[] = (await api.call('GET', '/v1/instances', { token: real.token })).body;
  checkRecoveries(instances);
  for (const instance of instances) {
    const entries = ledger.filter((e) => e.reference === instance.id);
    expect(entries.reduce((s, e) => s - e.amount_cents, 0)).toBe(instance.charged_cents);
    if (instance.status === 'terminated') {
      // a machine that never started costs nothing; one that ran, the started minutes (one hour at least)
      const minutes = Math.ceil((Date.parse(instance.terminated_at) - Date.parse(instance.created_at)) / 60_000);
      const cost = instance.started_at === null ? 0 : Math.ceil((instance.rate_cents_per_hour * Math.max(60, minutes)) / 60);
      expect(instance.charged_cents).toBe(cost);
    }
    if (instance.status === 'failed') expect(instance.charged_cents).toBe(0);
  }
  // no machine runs unpaid once a sweep has seen the funds gone
  if (afterSweep && account.running_machines > 0) expect(account.owed_cents > 0 && account.available_cents <= 0).toBe(false);
  // a budget counts every charge of its month, whichever path posted it
  if (account.budget) expect(account.budget.spent_cents).toBe(chargedThisMonth(ledger, world.clock.now()));
  // a budget stop leaves nothing running and nothing provisioning
  if (account.pause?.kind === 'budget') {
    expect(account.running_machines).toBe(0);
    expect(instances.filter((i) => ['provisioning', 'running', 'rebooting'].includes(i.status))).toEqual([]);
  }
  // the dead-man switch: once a sweep saw the agent's deadline pass, nothing of it runs, and nothing of it was billed past it
  if (afterSweep) {
    const agent = ((await api.call('GET', '/v1/tokens', { token: real.token })).body as any[]).find((t) => t.id === real.agent.id);
    const deadline = Date.parse(agent.idle_deadline_at);
    if (agent.revoked_at === null) expect(deadline).toBeGreaterThan(world.clock.now().getTime());
    else {
      expect(agent.revoked_at).toBe(agent.idle_deadline_at);
      for (const instance of instances.filter((i) => model.agentInstances.includes(i.id))) {
        expect(['terminated', 'failed']).toContain(instance.status);
        if (instance.terminated_at !== null && !model.endedByHand.has(instance.id)) expect(Date.parse(instance.terminated_at)).toBeLessThanOrEqual(deadline);
      }
    }
  }
}

/**
 * Each replacement points back at the machine it replaced and only that one points at it; it has one attempt fewer,
 * the same GPUs and window end, and costs no more per GPU than the first machine of its chain.
 */
function checkRecoveries(instances: any[]): void {
  const byId = new Map(instances.map((i) => [i.id, i]));
  const perGpu = (i: any) => Math.ceil(i.rate_cents_per_hour / i.gpu_count);
  for (const instance of instances) {
    if (instance.replaced_by !== null) {
      const next = byId.get(instance.replaced_by);
      expect(next.replaces).toBe(instance.id);
      expect(next.recovery.attempts_left).toBe(instance.recovery.attempts_left - 1);
      expect([next.gpu_type, next.gpu_count, next.window_ends_at]).toEqual([instance.gpu_type, instance.gpu_count, instance.window_ends_at]);
      expect(instance.status).not.toMatch(/^(provisioning|running|rebooting)$/);
    }
    if (instance.replaces !== null) {
      let first = instance;
      while (first.replaces !== null) first = byId.get(first.replaces);
      expect(perGpu(instance)).toBeLessThanOrEqual(perGpu(first));
      expect(instances.filter((i) => i.replaced_by === instance.id)).toHaveLength(1);
    }
  }
}

type Cmd = fc.AsyncCommand<Model, Real>;

const command = (name: string, check: (m: Model) => boolean, run: (m: Model, r: Real) => Promise<boolean | void>): Cmd => ({
  check,
  async run(m, r) {
    const sweep = await run(m, r);
    await checkBooks(m, r, sweep === true);
  },
  toString: () => name,
});

const credit = (usd: number) => command(`credit(${usd})`, () => true, async (_m, r) => {
  await world.api.call('POST', `/v1/operator/tenants/${r.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: usd, reason: 'model' } });
});
const depositConfirmed = (usd: number) => command(`deposit(${usd})`, () => true, async (_m, r) => {
  const d = await world.api.call('POST', '/v1/billing/deposits', { token: r.token, body: { amount_usd: usd } });
  await world.api.call('POST', `/v1/billing/deposits/${d.body.id}/confirm`, { headers: OPERATOR });
});
const rent = (pick: number, hours: number | null, attempts: number | null = null) => command(`rent(${pick}, ${hours}${attempts ? `, recovery ${attempts}` : ''})`, () => true, async (m, r) => {
  const node = nodeIds[pick % nodeIds.length]!;
  const res = await world.rent(r.token, { node_id: node, ...(hours && { termination_hours: hours }), ...(attempts && { recovery: { max_attempts: attempts } }) });
  expect([201, 402, 409]).toContain(res.status);
  if (res.status === 201) m.instances.push(res.body.id);
  if (res.status === 201 && attempts) m.recovering.push(res.body.id);
});
const agentRent = (pick: number, hours: number | null) => command(`agent rent(${pick}, ${hours})`, () => true, async (m, r) => {
  const node = nodeIds[pick % nodeIds.length]!;
  const res = await world.rent(r.agent.token, { node_id: node, ...(hours && { termination_hours: hours }) });
  // 401 once the agent timed out idle
  expect([201, 401, 402, 409]).toContain(res.status);
  if (res.status === 201) {
    m.instances.push(res.body.id);
    m.agentInstances.push(res.body.id);
  }
});
const heartbeat = () => command('agent heartbeat', () => true, async (_m, r) => {
  expect([200, 401]).toContain((await world.api.call('POST', '/v1/tokens/self/heartbeat', { token: r.agent.token })).status);
});
const terminate = (k: number) => command(`terminate(${k})`, (m) => m.instances.length > 0, async (m, r) => {
  const id = m.instances[k % m.instances.length]!;
  m.endedByHand.add(id);
  expect((await world.api.call('POST', `/v1/instances/${id}/terminate`, { token: r.token })).status).toBe(200);
});
const schedule = (k: number, minutes: number) => command(`schedule(${k}, ${minutes})`, (m) => m.instances.length > 0, async (m, r) => {
  const id = m.instances[k % m.instances.length]!;
  const at = new Date(world.clock.now().getTime() + minutes * 60_000).toISOString();
  const res = await world.api.call('POST', `/v1/instances/${id}/schedule-removal`, { token: r.token, body: { removal_scheduled_at: at } });
  expect([200, 409]).toContain(res.status);
});
/** The sandbox loses the machine, or takes it back, and a sweep follows: it settles it, and replaces it when it asked for recovery. */
const chaos = (what: 'lose' | 'preempt', k: number) => command(`${what}(${k}) + sweep`, (m) => m.instances.length > 0, async (m, r) => {
  const aimed = m.recovering.length > 0 ? m.recovering : m.instances;
  const id = aimed[k % aimed.length]!;
  const res = await world.api.call('POST', `/v1/operator/sandbox/machines/${id}/${what}`, { headers: OPERATOR });
  expect([200, 409]).toContain(res.status);
  return swept(m, r);
});
/** A sweep; the replacements it rented are the model's machines too. */
async function swept(m: Model, r: Real): Promise<true> {
  expect((await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
  const instances: any[] = (await world.api.call('GET', '/v1/instances', { token: r.token })).body;
  for (const instance of instances) {
    if (m.instances.includes(instance.id)) continue;
    m.instances.push(instance.id);
    if (instance.recovery) m.recovering.push(instance.id);
  }
  return true;
}
const sweep = () => command('sweep', () => true, swept);
const stop = () => command('stop', () => true, async (m, r) => {
  for (const id of m.instances) m.endedByHand.add(id);
  expect((await world.api.call('POST', '/v1/billing/stop', { token: r.token })).status).toBe(200);
});
const resume = () => command('resume', () => true, async (_m, r) => {
  expect([200, 409]).toContain((await world.api.call('POST', '/v1/billing/resume', { token: r.token })).status);
});
const hold = () => command('hold', () => true, async (m, r) => {
  for (const id of m.instances) m.endedByHand.add(id);
  expect((await world.api.call('POST', `/v1/operator/tenants/${r.tenantId}/hold`, { headers: OPERATOR })).status).toBe(200);
});
const lift = () => command('operator resume', () => true, async (_m, r) => {
  expect((await world.api.call('POST', `/v1/operator/tenants/${r.tenantId}/resume`, { headers: OPERATOR })).status).toBe(200);
});
const budget = (usd: number, stop: boolean) => command(`budget(${usd}, ${stop})`, () => true, async (_m, r) => {
  expect((await world.api.call('PUT', '/v1/billing/budget', { token: r.token, body: { monthly_usd: usd, stop_at_limit: stop } })).status).toBe(200);
});
const noBudget = () => command('no budget', () => true, async (_m, r) => {
  expect((await world.api.call('DELETE', '/v1/billing/budget', { token: r.token })).status).toBe(204);
});
const advance = (minutes: number) => command(`advance(${minutes}m)`, () => true, async () => {
  world.clock.advance(minutes * 60_000);
});

const commands = [
  fc.integer({ min: 1, max: 30 }).map(credit),
  fc.integer({ min: 1, max: 30 }).map(depositConfirmed),
  fc.tuple(fc.nat(), fc.option(fc.integer({ min: 1, max: 6 }), { nil: null })).map(([p, h]) => rent(p, h)),
  fc.tuple(fc.nat(), fc.option(fc.integer({ min: 1, max: 6 }), { nil: null })).map(([p, h]) => rent(p, h)),
  fc.tuple(fc.nat(), fc.option(fc.integer({ min: 1, max: 6 }), { nil: null })).map(([p, h]) => agentRent(p, h)),
  fc.constant(null).map(heartbeat),
  fc.tuple(fc.nat(), fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }), fc.integer({ min: 1, max: 3 })).map(([p, h, a]) => rent(p, h, a)),
  fc.tuple(fc.nat(), fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }), fc.integer({ min: 1, max: 3 })).map(([p, h, a]) => rent(p, h, a)),
  fc.nat().map((k) => chaos('lose', k)),
  fc.nat().map((k) => chaos('lose', k)),
  fc.nat().map((k) => chaos('preempt', k)),
  fc.nat().map(terminate),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 240 })).map(([k, m]) => schedule(k, m)),
  fc.constant(null).map(sweep),
  fc.constant(null).map(sweep),
  fc.constant(null).map(stop),
  fc.constant(null).map(resume),
  fc.constant(null).map(hold),
  fc.constant(null).map(lift),
  fc.integer({ min: 1, max: 150 }).map(advance),
  fc.tuple(fc.integer({ min: 50, max: 600 }), fc.boolean()).map(([cents, stop]) => budget(cents / 100, stop)),
  fc.integer({ min: 50, max: 600 }).map((cents) => budget(cents / 100, true)),
  fc.constant(null).map(noBudget),
];

/** The agent's life: rentals and heartbeats between clock moves and sweeps, so its deadline passes under running machines. */
const agentCommands = [
  fc.tuple(fc.nat(), fc.option(fc.integer({ min: 1, max: 6 }), { nil: null })).map(([p, h]) => agentRent(p, h)),
  fc.tuple(fc.nat(), fc.option(fc.integer({ min: 1, max: 6 }), { nil: null })).map(([p, h]) => agentRent(p, h)),
  fc.constant(null).map(heartbeat),
  fc.nat().map(terminate),
  fc.constant(null).map(sweep),
  fc.constant(null).map(sweep),
  fc.integer({ min: 1, max: 30 }).map(credit),
  fc.constant(null).map(stop),
  fc.constant(null).map(resume),
  fc.integer({ min: 1, max: 90 }).map(advance),
];

async function runModel(cmds: Iterable<Cmd>, budgetCents: number | null = null): Promise<void> {
  const tenant = await world.fundedTenant(5);
  if (budgetCents !== null) {
    const set = await world.api.call('PUT', '/v1/billing/budget', { token: tenant.token, body: { monthly_usd: budgetCents / 100, stop_at_limit: true } });
    expect(set.status).toBe(200);
  }
  const agent = await world.api.call('POST', '/v1/tokens', { token: tenant.token, body: { scopes: ['read', 'rent'], idle_timeout_minutes: AGENT_IDLE_MINUTES } });
  expect(agent.status).toBe(201);
  const real: Real = { token: tenant.token, tenantId: tenant.tenantId, seen: new Map(), agent: { token: agent.body.token, id: agent.body.id } };
  await fc.asyncModelRun(() => ({ model: { instances: [], agentInstances: [], endedByHand: new Set<string>(), recovering: [] }, real }), cmds);
}

describe('one account under any sequence of operations', () => {
  it('keeps its books: the ledger sums to the balance, entries never change, nothing is charged twice nor past an idle deadline', async () => {
    await fc.assert(
      // half the accounts begin with a budget that stops at its limit, within what their funds can spend
      fc.asyncProperty(fc.commands(commands, { maxCommands: 25 }), fc.option(fc.integer({ min: 50, max: 500 }), { freq: 2 }), (cmds, budgetCents) => runModel(cmds, budgetCents)),
      { numRuns: 25 },
    );
  }, 120_000);

  it('ends an agent that went silent at its idle deadline: its machines billed to it, nothing of it running after a sweep', async () => {
    await fc.assert(fc.asyncProperty(fc.commands(agentCommands, { maxCommands: 20 }), (cmds) => runModel(cmds)), { numRuns: 20 });
  }, 120_000);
});
