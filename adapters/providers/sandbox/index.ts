import { envFlag, envInt, envUsdPrice, isUsdPrice, type ProviderDatabase, type ProviderModule } from '../provider-module.ts';
import { SandboxProvider } from './adapter.ts';
import { MemorySandboxStore } from './memory-store.ts';
import { SandboxCloud } from './simulator.ts';
import { SqlSandboxStore } from './sql-store.ts';

export { SandboxProvider } from './adapter.ts';
export { SandboxCloud, type InjectedCreateFailure, type ProvisioningMishap } from './simulator.ts';
export { EXTRA_FILTER_KEYS as SANDBOX_EXTRA_FILTER_KEYS } from './catalog.ts';

export interface SandboxConfig {
  /** Same seed, same market, on every machine (default 2026). */
  seed?: number;
  /** How many offers the market lists (default 300; 50,000 is fine for benchmarks). */
  offers?: number;
  /** Time from create to running (default 20 s), measured on `clock`. */
  provisioningMs?: number;
  /** Time a reboot keeps a machine in `rebooting` (default 10 s), measured on `clock`. */
  rebootMs?: number;
  /** Real time every offer listing takes (default 0), so timeouts on slow upstreams can be tried. */
  latencyMs?: number;
  /** Share of creates the hosts decline, drawn from the seed (0 to 1, default 0). */
  failureRate?: number;
  /**
   * Spot machines preempted whatever the price, per machine-hour, at seeded random moments (default 0.02: one in
   * fifty an hour); each is also preempted the first hour its offer's spot price is over its bid. 0: by price only.
   */
  spotPreemptionsPerHour?: number;
  /** How long a terminated machine can still be read back (default 1 h), measured on `clock`. */
  terminatedRetentionMs?: number;
  /** Milliseconds since the epoch (default Date.now); inject one to move machines on without sleeping. */
  clock?: () => number;
  /** What a volume costs, exact decimal USD per GB-month, in every region (default "0.07", a common network volume price). */
  volumePriceUsdPerGbMonth?: string;
}

const MAX_OFFERS = 1_000_000;

function check(name: string, value: number, min: number, max: number, integer: boolean): number {
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new RangeError(`sandbox ${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/**
 * The embedded default provider: a simulated GPU cloud, no network. With `database` (the control plane's)
 * its machines and offer state live there, so they outlive a restart and every process on that database
 * sees one cloud; without one (catalog tests, benchmarks) they live in this process only.
 */
export function createSandboxProvider(config: SandboxConfig = {}, database?: ProviderDatabase): SandboxProvider {
  const clock = config.clock ?? Date.now;
  const options = {
    seed: check('seed', config.seed ?? 2026, 0, 0xffff_ffff, true),
    offers: check('offers', config.offers ?? 300, 1, MAX_OFFERS, true),
    provisioningMs: check('provisioningMs', config.provisioningMs ?? 20_000, 0, Number.MAX_SAFE_INTEGER, false),
    rebootMs: check('rebootMs', config.rebootMs ?? 10_000, 0, Number.MAX_SAFE_INTEGER, false),
    failureRate: check('failureRate', config.failureRate ?? 0, 0, 1, false),
    terminatedRetentionMs: check('terminatedRetentionMs', config.terminatedRetentionMs ?? 3_600_000, 0, Number.MAX_SAFE_INTEGER, false),
    spotPreemptionsPerHour: check('spotPreemptionsPerHour', config.spotPreemptionsPerHour ?? 0.02, 0, 3_600, false),
    clock,
  };
  const cloud = new SandboxCloud(options, database ? new SqlSandboxStore(database) : new MemorySandboxStore(clock()));
  cloud.latencyMs = check('latencyMs', config.latencyMs ?? 0, 0, 600_000, false);
  const volumePrice = config.volumePriceUsdPerGbMonth ?? '0.07';
  if (!isUsdPrice(volumePrice)) throw new RangeError(`sandbox volumePriceUsdPerGbMonth must be a decimal USD amount, got "${volumePrice}"`);
  return new SandboxProvider(cloud, volumePrice);
}

export const sandboxModule: ProviderModule<SandboxConfig> = {
  name: 'sandbox',
  real: false,
  // it simulates a container cloud: the login is root
  sshUser: 'root',
  configuration: [
    {
      names: ['SANDBOX_ENABLED'],
      default: '`true`',
      meaning: 'the simulated GPU cloud (`SANDBOX_OFFERS` 300, `SANDBOX_SEED` 2026, `SANDBOX_LATENCY_MS` 0, `SANDBOX_VOLUME_USD_PER_GB_MONTH` 0.07)',
    },
  ],
  fromEnv(env) {
    if (!envFlag(env, 'SANDBOX_ENABLED', true)) return null;
    const config: SandboxConfig = {
      seed: envInt(env, 'SANDBOX_SEED', 2026, 0, 0xffff_ffff),
      offers: envInt(env, 'SANDBOX_OFFERS', 300, 1, MAX_OFFERS),
      latencyMs: envInt(env, 'SANDBOX_LATENCY_MS', 0, 0, 600_000),
    };
    const volumePriceUsdPerGbMonth = envUsdPrice(env, 'SANDBOX_VOLUME_USD_PER_GB_MONTH');
    return { ...config, ...(volumePriceUsdPerGbMonth && { volumePriceUsdPerGbMonth }) };
  },
  create: (config, { clock, database }) => createSandboxProvider({ clock: () => clock.now().getTime(), ...config }, database),
};
