import type { Cents } from '../money.ts';

/**
 * The one conversion from an upstream price (exact decimal USD per hour, e.g. "2.4933333") to the
 * customer's integer rate: ceil(usd * 100 * (1 + markupBps / 10000)). Done in integers (BigInt), so
 * no binary float ever touches a price; always rounded up, so the service never sells below cost.
 */
export function rateCentsPerHour(usdPerHour: string, markupBps: number): Cents {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(usdPerHour);
  if (!match) throw new RangeError(`not an exact decimal USD price: "${usdPerHour}"`);
  if (!Number.isSafeInteger(markupBps) || markupBps < 0) throw new RangeError(`markup must be whole basis points >= 0, got ${markupBps}`);
  const [, whole, fraction = ''] = match;
  const numerator = BigInt(whole + fraction) * 100n * (10_000n + BigInt(markupBps));
  const denominator = 10n ** BigInt(fraction.length) * 10_000n;
  const cents = (numerator + denominator - 1n) / denominator;
  if (cents > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`price out of range: "${usdPerHour}"`);
  return Number(cents);
}

/**
 * The price of one GPU of a machine: machine price / gpu count, rounded up to the cent. Because it is
 * a ceiling, "per-GPU price <= c" for a whole number of cents c holds exactly when machine <= c * count.
 */
export function perGpuCents(machineCents: Cents, gpuCount: number): Cents {
  if (!Number.isSafeInteger(gpuCount) || gpuCount < 1) throw new RangeError(`gpu count must be a whole number >= 1, got ${gpuCount}`);
  const remainder = machineCents % gpuCount;
  return (machineCents - remainder) / gpuCount + (remainder > 0 ? 1 : 0);
}

/**
 * A caller's per-GPU price ceiling in USD ("0.355", 2) as the largest whole number of cents that
 * satisfies it: floor(usd * 100). Since node prices are whole cents, price <= ceiling in USD holds
 * exactly when price_cents <= this. null when the text is not a non-negative decimal.
 */
export function ceilingCents(usd: string): Cents | null {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(usd.trim());
  if (!match) return null;
  const [, whole = '0', fraction = ''] = match;
  if (whole.replace(/^0+/, '').length > 13) return null;
  return Number(whole) * 100 + Number((fraction + '00').slice(0, 2));
}
