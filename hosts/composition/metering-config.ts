import { parsePriceList, type PriceList } from '../../core/metering/prices.ts';

/** The price list in the form METERED_PRICES holds it: `{"<kind>": {"unit": "GB-hour", "usd_per_unit": "0.0001"}}`. */
export type MeteredPricesJson = Record<string, { unit: string; usd_per_unit: string | number }>;

export interface MeteringConfig {
  /** Kinds a tenant's services may report (POST /v1/metering/usage) and their prices; volume_storage is built in. */
  prices: MeteredPricesJson;
}

/** The METERED_PRICES that docs/configuration.md shows (and test/api/openapi-examples.test.ts starts a server with). */
export const METERED_PRICES_EXAMPLE = '{"gpu_seconds": {"unit": "second", "usd_per_unit": "0.0004"}}';

/** METERED_PRICES, read; its problems are added to `problems`, each naming the variable. */
export function meteringFromEnv(env: Record<string, string | undefined>, problems: string[]): MeteringConfig {
  const text = env.METERED_PRICES?.trim();
  if (!text) return { prices: {} };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    problems.push(`  METERED_PRICES: not JSON (${(error as Error).message}); write e.g. ${METERED_PRICES_EXAMPLE}`);
    return { prices: {} };
  }
  const parsed = parsePriceList(raw);
  if (!parsed.ok) {
    problems.push(...parsed.problems.map((problem) => `  METERED_PRICES: ${problem}`));
    return { prices: {} };
  }
  return { prices: raw as MeteredPricesJson };
}

/** The price list a control plane meters with; a bad one (from an embedding program) names what to fix. */
export function priceListOf(config: MeteringConfig | undefined): { ok: true; prices: PriceList } | { ok: false; problems: string[] } {
  return parsePriceList(config?.prices ?? {});
}
