import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { CliError, EXIT } from './exit-codes.ts';

/** A saved sign-in: where the API is and the bearer for it, kept together so a token never meets another server. */
export interface Profile {
  url: string;
  token: string;
  tenant_id?: string | null;
  expires_at?: string | null;
}

export interface ConfigFile {
  current: string;
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';
export const DEFAULT_URL = 'http://localhost:8080';

/** $XDG_CONFIG_HOME/gpuctl/config.json; the XDG spec ignores a relative XDG_CONFIG_HOME, and so does this. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'gpuctl', 'config.json');
}

export function readConfig(path: string): ConfigFile {
  if (!existsSync(path)) return { current: DEFAULT_PROFILE, profiles: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<ConfigFile>;
    return { current: parsed.current ?? DEFAULT_PROFILE, profiles: parsed.profiles ?? {} };
  } catch (error) {
    throw new CliError(`${path} is not valid JSON (${(error as Error).message}): fix or delete it`, EXIT.unexpected);
  }
}

/**
 * Written whole to a new file then renamed over the old one, created 0600 in a 0700 directory: it holds
 * bearer tokens. An older file with looser bits is tightened too.
 */
export function writeConfig(path: string, config: ConfigFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

/** The profile a login or a tenant switch writes: --profile, GPUCTL_PROFILE, or the current one. */
export const profileName = (options: { profile?: string | undefined }, env: NodeJS.ProcessEnv = process.env): string =>
  options.profile ?? env.GPUCTL_PROFILE ?? readConfig(configPath(env)).current;

/** Saves a sign-in as `name` and makes it the current profile; answers the file's path. */
export function saveProfile(name: string, profile: Profile): string {
  const path = configPath();
  const config = readConfig(path);
  config.profiles[name] = profile;
  config.current = name;
  writeConfig(path, config);
  return path;
}

export interface Connection {
  url: string;
  token: string | null;
  /** Where the connection came from, for messages: "GPUCTL_TOKEN" or "profile default". */
  source: string;
  profile: string;
}

/**
 * GPUCTL_URL and GPUCTL_TOKEN win over the profile (a script or CI needs no file); the profile is
 * --profile, else GPUCTL_PROFILE, else the one the last login made current.
 */
export function resolveConnection(options: { profile?: string | undefined }, env: NodeJS.ProcessEnv = process.env): Connection {
  const config = readConfig(configPath(env));
  const name = options.profile ?? env.GPUCTL_PROFILE ?? config.current;
  const saved = config.profiles[name];
  const url = env.GPUCTL_URL || saved?.url || DEFAULT_URL;
  if (env.GPUCTL_TOKEN) return { url, token: env.GPUCTL_TOKEN, source: 'GPUCTL_TOKEN', profile: name };
  // a saved token is only sent to the URL it was issued by
  const token = saved && (!env.GPUCTL_URL || sameServer(saved.url, env.GPUCTL_URL)) ? saved.token : null;
  return { url, token, source: `profile ${name}`, profile: name };
}

const sameServer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
