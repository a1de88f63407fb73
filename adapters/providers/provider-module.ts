import type { Clock } from '../../core/ports/clock.ts';
import type { Provider } from '../../core/ports/providers.ts';

export type Env = Record<string, string | undefined>;

/**
 * Raw SQL on the control plane's own database (MikroStorage.execute; `?` placeholders), for an adapter
 * that keeps state there (a simulated cloud). Each call is one statement outside any transaction.
 */
export interface ProviderDatabase {
  execute<T = Record<string, unknown>[]>(sql: string, params?: unknown[]): Promise<T>;
}

/** What the composition root hands every provider module besides its configuration. */
export interface ProviderRuntime {
  clock: Clock;
  database: ProviderDatabase;
  /** The names of the providers this control plane enables: a reseller leaves the clouds we reach directly out. */
  enabledProviders: readonly string[];
  /** Our provider name for a cloud a reseller names its own way (ProviderModule.alsoKnownAs); the name itself when we have none. */
  providerNamed(name: string): string;
}

/**
 * One row of docs/configuration.md: a variable that enables or tunes a provider, and the ones that go with it
 * (named in backquotes in `meaning`). The configuration reference lists every module's rows in registry order.
 */
export interface ProviderVariable {
  names: readonly string[];
  default: string;
  /** Markdown. */
  meaning: string;
}

/**
 * What the rest of the control plane knows about one provider: its name, its traits, how the environment enables
 * it and how it is built. Nothing outside the provider's folder and the registry names a provider
 * (docs/adding-a-provider.md).
 */
export interface ProviderModule<C = any> {
  /** Lower case, the prefix of its node ids (`<name>:<offer id>`); the adapter's `Provider.name`. */
  name: string;
  /** Rents real machines for real money (a simulated cloud does not): turns RENTALS_OPEN's default to false. */
  real: boolean;
  /**
   * The user an SSH login to its machines takes: `root` in a container, the image's own user on a virtual
   * machine. Instances state it (`ssh_user`), so no client keeps a table of its own.
   */
  sshUser: string;
  /** The names other clouds that resell this one give it (the name it had before a rename, or a reseller's spelling of it), so one machine is not listed twice. */
  alsoKnownAs?: readonly string[];
  /** Its rows of docs/configuration.md: every variable `fromEnv` reads is named there (a test holds it). */
  configuration: readonly ProviderVariable[];
  /**
   * The adapter's settings from the environment, or null when the environment does not enable it.
   * Throws an Error whose message names the variable when a value is wrong.
   */
  fromEnv(env: Env): C | null;
  create(config: C, runtime: ProviderRuntime): Provider;
}

/** One enabled provider in a control plane's configuration. */
export interface ProviderSetting {
  name: string;
  config: unknown;
}

/** A whole number from an environment variable, or the fallback when unset. */
export function envInt(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name}: must be a whole number from ${min} to ${max}, got "${text}"`);
  return value;
}

export function envUrl(env: Env, name: string): string | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
  } catch {
    throw new Error(`${name}: must be an http(s) URL, got "${text}"`);
  }
  return text;
}

/**
 * A real cloud's credentials: `<PREFIX>_API_KEY` enables it, `<PREFIX>_BASE_URL` optionally moves it.
 * null when the key is unset; a base URL without its key is a half-configured cloud, so it stops the start.
 */
export function envCredentials(env: Env, prefix: string, cloud: string): { apiKey: string; baseUrl?: string } | null {
  const apiKey = env[`${prefix}_API_KEY`]?.trim();
  const baseUrl = envUrl(env, `${prefix}_BASE_URL`);
  if (!apiKey) {
    if (baseUrl) throw new Error(`${prefix}_BASE_URL: set, but ${prefix}_API_KEY is not; set both to enable ${cloud}`);
    return null;
  }
  return { apiKey, ...(baseUrl && { baseUrl }) };
}

export function envFlag(env: Env, name: string, fallback: boolean): boolean {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (/^(true|1|yes|on)$/i.test(text)) return true;
  if (/^(false|0|no|off)$/i.test(text)) return false;
  throw new Error(`${name}: must be true or false, got "${text}"`);
}

/** An exact decimal USD amount as text: digits, at most 9 before the point and 6 after ("0.07", "0.2"). */
export const isUsdPrice = (text: string): boolean => /^\d{1,9}(\.\d{1,6})?$/.test(text);

/** A USD price from an environment variable (a storage price per GB-month); undefined when unset (the adapter's default). */
export function envUsdPrice(env: Env, name: string): string | undefined {
  const text = env[name]?.trim();
  if (text === undefined || text === '') return undefined;
  if (!isUsdPrice(text)) throw new Error(`${name}: must be a decimal USD amount such as 0.07 (at most 6 decimals), got "${text}"`);
  return text;
}
