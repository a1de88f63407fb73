import { hash32, Rng } from './prng.ts';

/**
 * The sandbox's simulated spot market, a pure function of the seed and the clock, so every process on one
 * database (and every run with one seed) sees the same prices and the same preemptions:
 * - an offer has a spot market or not, drawn once from the seed (SPOT_SHARE of them do);
 * - its spot price moves once an hour: a fraction of the on-demand price around CENTER, driven by a seeded
 *   random shock each hour, each shock fading by DECAY an hour (a mean-reverting walk that remembers the
 *   last WINDOW hours), so the price drifts up and down in runs rather than jumping;
 * - a spot machine is preempted at the first hour its offer's spot price is over its bid, or at a seeded
 *   random moment (exponential lifetime at the configured rate per hour), whichever comes first.
 * Prices are integer ten-thousandths of a dollar (price.ts), as everywhere in the sandbox.
 */

export const HOUR_MS = 3_600_000;
/** Share of offers that have a spot market at all. */
const SPOT_SHARE = 0.6;
/** Where the spot price sits, as a fraction of the on-demand price, and how far it swings (about one standard deviation). */
const CENTER = 0.45;
const SPREAD = 0.12;
const FLOOR = 0.15;
const CEILING = 0.95;
/** Hours a shock is remembered, and how much of it is left an hour later. */
const WINDOW = 24;
const DECAY = 0.85;
const WEIGHTS = Array.from({ length: WINDOW }, (_, k) => DECAY ** k);
/** The spread of the weighted sum of WINDOW uniform shocks in [-1, 1]: sqrt(sum of w^2 / 3). */
const SUM_SD = Math.sqrt(WEIGHTS.reduce((sum, w) => sum + w * w, 0) / 3);
/** How far ahead a machine's next preemption by price is looked for: beyond it, never (90 days). */
export const HORIZON_HOURS = 24 * 90;

const SPOT_SALT = 0x5b07;
const SHOCK_SALT = 0x5b08;
const LIFETIME_SALT = 0x5b09;

export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS);

/**
 * The fraction of the on-demand price from the shocks of the last WINDOW hours, newest first. Always summed
 * in this order, so a price read alone and one read while scanning hours are the same double, bit for bit.
 */
function fractionOf(shockAt: (k: number) => number): number {
  let sum = 0;
  for (let k = 0; k < WINDOW; k++) sum += WEIGHTS[k]! * shockAt(k);
  const fraction = CENTER + (SPREAD * sum) / SUM_SD;
  return Math.min(CEILING, Math.max(FLOOR, fraction));
}

export const spotUnitsOf = (priceUnits: number, fraction: number): number => Math.max(1, Math.round(priceUnits * fraction));

export class SpotModel {
  readonly #seed: number;
  /** Fractions of the hour last asked, per catalog index (NaN: not worked out yet); a listing asks for every offer. */
  #cache: { hour: number; fractions: Float64Array } | null = null;
  readonly #size: number;
  /** Per offer, once: whether it has a spot market, and the key of its shocks (so a shock hashes two words, not four). */
  readonly #markets: Uint8Array;
  readonly #shockKeys: Uint32Array;

  constructor(seed: number, offers: number) {
    this.#seed = seed;
    this.#size = offers;
    this.#markets = new Uint8Array(offers);
    this.#shockKeys = new Uint32Array(offers);
    for (let index = 0; index < offers; index++) {
      this.#markets[index] = new Rng(hash32(seed, index, SPOT_SALT)).chance(SPOT_SHARE) ? 1 : 0;
      this.#shockKeys[index] = hash32(seed, index, SHOCK_SALT);
    }
  }

  /** Whether the generated offer at `index` has a spot market (a test may still give one to any offer). */
  hasMarket(index: number): boolean {
    return this.#markets[index] === 1;
  }

  /** This hour's shock for the offer, uniform in [-1, 1). */
  #shock(index: number, hour: number): number {
    return (hash32(this.#shockKeys[index]!, hour) / 2 ** 32) * 2 - 1;
  }

  #fraction(index: number, hour: number): number {
    return fractionOf((k) => this.#shock(index, hour - k));
  }

  /** The offer's spot price in the hour, from its on-demand price then; null when it has no spot market. */
  spotUnits(index: number, priceUnits: number, hour: number): number | null {
    if (!this.hasMarket(index)) return null;
    let cache = this.#cache;
    if (cache?.hour !== hour) this.#cache = cache = { hour, fractions: new Float64Array(this.#size).fill(Number.NaN) };
    let fraction = cache.fractions[index]!;
    if (Number.isNaN(fraction)) cache.fractions[index] = fraction = this.#fraction(index, hour);
    return spotUnitsOf(priceUnits, fraction);
  }

  /**
   * The first moment from `fromMs` on that the offer's walking spot price is over `bidUnits`: `fromMs` itself
   * when it already is, else the start of the first later hour where it is; null when not within HORIZON_HOURS.
   */
  firstOverBid(index: number, priceUnits: number, bidUnits: number, fromMs: number): number | null {
    const start = hourOf(fromMs);
    // the shocks of the window before `start` and of every hour scanned, each drawn once
    const shocks = new Float64Array(WINDOW - 1 + HORIZON_HOURS + 1);
    const first = start - (WINDOW - 1);
    for (let i = 0; i < WINDOW - 1; i++) shocks[i] = this.#shock(index, first + i);
    for (let hour = start; hour <= start + HORIZON_HOURS; hour++) {
      const at = hour - first;
      shocks[at] = this.#shock(index, hour);
      if (spotUnitsOf(priceUnits, fractionOf((k) => shocks[at - k]!)) > bidUnits) return hour === start ? fromMs : hour * HOUR_MS;
    }
    return null;
  }

  /** When the machine is reclaimed whatever the price, drawn from the seed: null when the rate is 0. */
  randomPreemptionAt(serial: number, createdAt: number, ratePerHour: number): number | null {
    if (ratePerHour <= 0) return null;
    const u = hash32(this.#seed, serial, LIFETIME_SALT) / 2 ** 32;
    const hours = -Math.log(1 - u) / ratePerHour;
    return createdAt + Math.max(1, Math.round(hours * HOUR_MS));
  }
}
