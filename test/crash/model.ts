/** What the crash test itself knows happened, independent of the server's records (docs/decisions.md, "Crash anywhere, lose nothing"). */
export interface Model {
  /** Operator credits made. */
  creditedCents: number;
  /** Each idempotency key's first answer (an answer the kill cut is not one). */
  firstAnswers: Map<string, { status: number; id: string | null }>;
  /** Keys that rented by a quote, and the quote. */
  quoteKeys: Map<string, string>;
  /** Checkout sessions the payer paid, and their amount in cents. */
  paidCheckouts: Map<string, number>;
  /** Every usage record sent, by its idempotency key: its quantity in millionths of a unit (retried until answered). */
  usage: Map<string, bigint>;
  /** The metered kind's price in millionths of a USD a unit. */
  usagePriceMicros: bigint;
  /** Keys rented with the capped token, and the hours each asked for. */
  cappedKeys: Map<string, number>;
  capped: { id: string; capCents: number; burnCeilingCents: number } | null;
  /** Event ids (webhook-id) the test's webhook endpoint received. */
  eventsReceived: Set<string>;
}

export const newModel = (usagePriceMicros: bigint): Model => ({
  creditedCents: 0,
  firstAnswers: new Map(),
  quoteKeys: new Map(),
  paidCheckouts: new Map(),
  usage: new Map(),
  usagePriceMicros,
  cappedKeys: new Map(),
  capped: null,
  eventsReceived: new Set(),
});

/** What the usage sent costs in all: the exact sum of quantity x price, rounded up to the cent once (docs/decisions.md, metering). */
export function usageCents(model: Model): number {
  let pico = 0n;
  for (const micros of model.usage.values()) pico += micros * model.usagePriceMicros;
  return Number((pico + 10_000_000_000n - 1n) / 10_000_000_000n);
}

/** mulberry32: a seeded generator, so a failing run can be played again. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
