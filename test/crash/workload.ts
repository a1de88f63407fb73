import type { FakeStripe } from '../fakes/stripe/server.ts';
import type { Cluster, Kind } from './cluster.ts';
import { rng, type Model } from './model.ts';
import type { Answer } from './snapshot-api.ts';

export const OPERATOR_KEY = 'crash-test-operator-key-0123456789';
const OPERATOR = { 'x-service-operator-key': OPERATOR_KEY };
export const METERED_KIND = 'gpu_seconds';
/** About as many rentals as the workload keeps running: a long run's money goes on, not out. */
const MAX_RUNNING = 10;

/** What the workload acts as: the tenant's root token, a capped child token, the cheap nodes it rents. */
export interface Tenant {
  id: string;
  token: string;
  cappedToken: string;
  endpointId: string;
  nodes: string[];
}

interface Rent {
  body: Record<string, unknown>;
  token: string;
}

type CallInit = { token?: string; body?: unknown; raw?: string; headers?: Record<string, string>; to?: Kind };

/**
 * The crash test's workload on the API (docs/decisions.md, "Crash anywhere, lose nothing"): rentals with idempotency
 * keys (some through a capped token, some by a quote rented by two keys at once), terminates, card checkouts whose
 * event the processor delivers twice, metered usage with idempotency keys and its settlement, and operator sweeps;
 * each request goes to a live server or replica (the one about to die at a crash point first). What a kill cut is
 * asked again after the restart; what was answered goes into the model.
 */
export class Workload {
  requests = 0;
  /** The process to send to while it is up (the one started with a crash point). */
  prefer: Kind | null = null;
  /** Rentals the kill may have cut, by key: asked again after the restart. */
  readonly pending = new Map<string, Rent>();
  /** Usage records the kill may have cut, by key, and their quantity. */
  readonly pendingUsage = new Map<string, string>();
  private readonly rents = new Map<string, Rent>();
  private readonly running = new Set<string>();
  private serial = 0;
  private readonly route: () => number;
  private readonly cluster: Cluster;
  private readonly random: () => number;
  private readonly model: Model;
  private readonly stripe: FakeStripe;
  tenant: Tenant | null = null;

  constructor(cluster: Cluster, random: () => number, model: Model, stripe: FakeStripe, seed: number) {
    this.cluster = cluster;
    this.random = random;
    this.model = model;
    this.stripe = stripe;
    // a generator of its own: where requests go does not move the workload's own draws
    this.route = rng(seed ^ 0x5eed);
  }

  async call(method: string, path: string, init: CallInit = {}): Promise<Answer> {
    this.requests++;
    const to = init.to ?? this.pick();
    const base = to && this.cluster.alive(to) ? this.cluster.base(to) : undefined;
    if (!base) throw new Error('no server is up');
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.body !== undefined || init.raw !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)) });
    const text = await res.text();
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, body };
  }

  /** A call the kill may cut: no answer reads as status 0. */
  tryCall(method: string, path: string, init: CallInit = {}): Promise<Answer> {
    return this.call(method, path, init).catch(() => ({ status: 0, body: null }));
  }

  operator(method: string, path: string, body?: unknown): Promise<Answer> {
    return this.tryCall(method, path, { headers: OPERATOR, ...(body !== undefined && { body }) });
  }

  /**
   * A pass through the operator's route, asked again while another runner (the sweep daemon) holds the sweep's lock,
   * until one runs its money steps here or `ms` passes; status 0 when the process died.
   */
  async sweep(ms = 15_000): Promise<Answer> {
    const deadline = performance.now() + ms;
    for (;;) {
      const answer = await this.operator('POST', '/v1/operator/sweep');
      if (answer.status !== 200 || answer.body?.ran === true || performance.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async rent(key: string, rent: Rent): Promise<void> {
    this.rents.set(key, rent);
    this.pending.set(key, rent);
    const answer = await this.tryCall('POST', '/v1/instances', { token: rent.token, body: { ...rent.body, idempotency_key: key } });
    if (answer.status === 0) return;
    this.pending.delete(key);
    // a refusal before the commit holds nothing (the key is free to rent later); an instance is the key's for good
    const first = this.model.firstAnswers.get(key);
    if (!first || first.id === null) this.model.firstAnswers.set(key, { status: answer.status, id: answer.body?.id ?? null });
    if (answer.status === 201 || answer.status === 200) this.running.add(answer.body.id);
  }

  /** Reports usage under `key`; the model counts it once, whatever the kill cuts. Answers a status other than 201 or none. */
  async report(key: string, quantity: string): Promise<number | null> {
    this.pendingUsage.set(key, quantity);
    const answer = await this.tryCall('POST', '/v1/metering/usage', { token: this.tenant!.token, body: { resource_kind: METERED_KIND, quantity, idempotency_key: key } });
    if (answer.status === 0) return null;
    this.pendingUsage.delete(key);
    if (answer.status === 201) return null;
    this.model.usage.delete(key);
    return answer.status;
  }

  /** The processor delivers the session's completed event (again). */
  deliver(sessionId: string): Promise<Answer> {
    const session = this.stripe.sessions.get(sessionId)!;
    const event = this.stripe.signedEvent('checkout.session.completed', session, { timestamp: Math.floor(this.cluster.now() / 1000) });
    return this.tryCall('POST', '/v1/webhooks/stripe', { raw: event.body, headers: { 'stripe-signature': event.header } });
  }

  /** After a restart: every rental and usage record the kill may have cut, asked again; answers the slowest rental answer, in ms. */
  async retryCut(violation: (what: string) => void): Promise<number> {
    let slowest = 0;
    for (const [key, rent] of [...this.pending]) {
      const asked = performance.now();
      await this.rent(key, rent);
      const took = performance.now() - asked;
      if (this.pending.has(key)) continue;
      slowest = Math.max(slowest, took);
      if (took > 5_000) violation(`key ${key} answered after ${Math.round(took)} ms after a restart`);
    }
    for (const [key, quantity] of [...this.pendingUsage]) {
      const refused = await this.report(key, quantity);
      if (refused !== null) violation(`usage key ${key} answered ${refused} when asked again`);
    }
    return slowest;
  }

  /** Keys answered before, a fifth of them asked again: the same instance. Answers how many were checked. */
  async askAgain(dead: () => boolean, violation: (what: string) => void): Promise<number> {
    let checked = 0;
    for (const [key, first] of this.model.firstAnswers) {
      if (dead() || first.id === null || this.random() > 0.2) continue;
      const rent = this.rents.get(key)!;
      const again = await this.tryCall('POST', '/v1/instances', { token: rent.token, body: { ...rent.body, idempotency_key: key } });
      if (again.status === 0) continue;
      checked++;
      if (again.body?.id !== first.id) violation(`key ${key} answered ${again.status} ${again.body?.id ?? again.body?.detail} after a restart, ${first.status} ${first.id} before`);
    }
    return checked;
  }

  /** One round: rentals (one capped, two by one quote), terminates, a checkout paid and delivered twice, usage, a settlement, a pass. */
  async round(violation: (what: string) => void): Promise<void> {
    const { token, cappedToken, nodes } = this.tenant!;
    const node = () => nodes[Math.floor(this.random() * nodes.length)]!;
    const picks = [node(), node(), node(), node()];
    const hours = 1 + Math.floor(this.random() * 3);
    const quantity = String((Math.floor(this.random() * 3_000_000) + 1) / 1000);
    const settle = this.random() < 0.3;
    const quote = await this.tryCall('POST', '/v1/quotes', { token, body: { node_id: picks[2] } });
    const work: Promise<unknown>[] = [this.rent(`k${this.serial++}`, { body: { node_id: picks[0] }, token }), this.rent(`k${this.serial++}`, { body: { node_id: picks[1] }, token })];
    const cappedKey = `c${this.serial++}`;
    this.model.cappedKeys.set(cappedKey, hours);
    work.push(this.rent(cappedKey, { body: { node_id: picks[3], termination_hours: hours }, token: cappedToken }));
    if (quote.status === 201) {
      for (let twice = 0; twice < 2; twice++) {
        const key = `q${this.serial++}`;
        this.model.quoteKeys.set(key, quote.body.id);
        work.push(this.rent(key, { body: { quote_id: quote.body.id }, token }));
      }
    }
    // the oldest end, two a round or more, so that a long run keeps about as many machines as a short one
    for (const id of [...this.running].slice(0, Math.max(2, this.running.size - MAX_RUNNING))) work.push(this.tryCall('POST', `/v1/instances/${id}/terminate`, { token }).then((r) => r.status !== 0 && this.running.delete(id)));
    work.push(
      this.tryCall('POST', '/v1/billing/checkout', { token, body: { amount_usd: 5 } }).then(async (checkout) => {
        if (checkout.status !== 201) return;
        this.stripe.completeSession(checkout.body.session_id, { brand: 'visa', last4: '4242' });
        this.model.paidCheckouts.set(checkout.body.session_id, 500);
        await this.deliver(checkout.body.session_id);
        await this.deliver(checkout.body.session_id);
      }),
    );
    const usageKey = `u${this.serial++}`;
    this.model.usage.set(usageKey, BigInt(Math.round(Number(quantity) * 1000)) * 1000n);
    work.push(
      this.report(usageKey, quantity).then((refused) => {
        if (refused !== null) violation(`usage key ${usageKey} answered ${refused}`);
      }),
    );
    if (settle) work.push(this.tryCall('POST', '/v1/metering/settle', { token }));
    work.push(this.operator('POST', '/v1/operator/sweep'));
    await Promise.all(work);
  }

  private pick(): Kind | null {
    if (this.prefer && this.cluster.alive(this.prefer)) return this.prefer;
    const live = this.cluster.liveServers();
    return live.length === 0 ? null : live[Math.floor(this.route() * live.length)]!;
  }
}
