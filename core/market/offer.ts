/**
 * One rentable machine configuration as an upstream cloud offers it, in our units.
 * Adapters produce offers; the core turns them into priced nodes (integer cents) for callers.
 */
export interface Offer {
  /** Provider-scoped, stable across refreshes: "<provider>:<provider's own offer id>". */
  id: string;
  provider: string;
  /**
   * The cloud a reseller rents this machine from: our provider name where we reach that cloud directly, else the
   * reseller's own name for it. Absent or null: the provider is the cloud itself.
   */
  underlyingCloud?: string | null;
  /** The GPU family, e.g. "H100", "A100", "RTX4090" (upper case, no spaces). */
  gpuType: string;
  /** The model as the provider names it, e.g. "H100 SXM5 80GB". */
  gpuModel: string;
  gpuCount: number;
  /** Memory of one GPU, in GB. */
  vramGb: number;
  /**
   * The upstream price of the whole machine in USD per hour, as an exact decimal string
   * ("2.4933333", "0.75"). Never a float: conversion to cents happens once, in core/pricing.
   */
  priceUsdPerHour: string;
  /**
   * The spot (interruptible) price of the whole machine now, exact decimal USD per hour, in the units a
   * SpotMarket bid is given in: a bid at or over it runs. null or absent: no spot market for this offer now.
   */
  spotPriceUsdPerHour?: string | null;
  /** Whether the price is one the provider guarantees (false for estimates, bids, unverified hosts). */
  priceVerified: boolean;
  cpus: number;
  ramGb: number;
  diskGb: number;
  /** null when the provider does not say. */
  downloadMbps: number | null;
  ports: number | null;
  /** ISO 3166-1 alpha-2 upper case, or null. */
  country: string | null;
  region: string | null;
  dockerInDocker: boolean;
  mig: boolean;
  baremetal: boolean;
  virtualized: boolean;
  /** How many such machines can be rented right now (1 for a single host ask). */
  available: number;
  /**
   * Raw upstream fields that `extra_filters` may match on, keyed by the names the adapter
   * declares in `extraFilterKeys`.
   */
  attributes: Record<string, string | number | boolean>;
}
