import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keyFilePath, loadOrCreateKeyFile, parseSecretsKey } from '../../adapters/crypto/secrets-key.ts';
import { ConfigError, configFromEnv } from '../../hosts/composition/config.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gcp-key-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('SECRETS_KEY', () => {
  const key = randomBytes(32);

  it('reads 32 bytes as 64 hex digits or base64 (standard or URL-safe, padded or not)', () => {
    for (const text of [key.toString('hex'), key.toString('hex').toUpperCase(), key.toString('base64'), key.toString('base64').replace(/=$/, ''), key.toString('base64url'), ` ${key.toString('base64')}\n`]) {
      expect(parseSecretsKey(text)).toEqual(key);
    }
  });

  it('refuses anything else: other lengths, other characters, a base64 text that is not the encoding of 32 bytes', () => {
    const last = key.toString('base64').replace(/=$/, '');
    const noncanonical = last.slice(0, 42) + String.fromCharCode(last.charCodeAt(42) + 1);
    for (const text of ['', 'secret', randomBytes(31).toString('hex'), randomBytes(33).toString('hex'), randomBytes(16).toString('base64'), randomBytes(48).toString('base64'), `${key.toString('hex').slice(1)}g`, noncanonical]) {
      expect(parseSecretsKey(text), text).toBeNull();
    }
  });

  it('is a configuration error naming SECRETS_KEY, whose message never repeats the value', () => {
    const bad = `${key.toString('hex').slice(2)}`;
    let error: unknown;
    try {
      configFromEnv({ SECRETS_KEY: bad });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/SECRETS_KEY: must be 32 random bytes as 64 hex digits or base64/);
    expect((error as Error).message).not.toContain(bad);
    expect(configFromEnv({ SECRETS_KEY: key.toString('base64') }).secretsKey).toEqual(key);
    expect(configFromEnv({})).not.toHaveProperty('secretsKey');
  });
});

describe("the embedded default's key file", () => {
  it('is made once in DATA_DIR, readable by its owner alone, and read back on the next start', () => {
    const dir = tempDir();
    const first = loadOrCreateKeyFile(dir);
    expect(first.created).toBe(true);
    expect(first.key).toHaveLength(32);
    expect(first.path).toBe(keyFilePath(dir));
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    const again = loadOrCreateKeyFile(dir);
    expect(again).toMatchObject({ created: false, key: first.key });
    expect(parseSecretsKey(readFileSync(first.path, 'utf8'))).toEqual(first.key);
  });

  it('is made readable by its owner alone again when a restore loosened it', () => {
    const dir = tempDir();
    const { path, key } = loadOrCreateKeyFile(dir);
    chmodSync(path, 0o644);
    expect(loadOrCreateKeyFile(dir).key).toEqual(key);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('is never replaced when it holds no key: the error names the file', () => {
    const dir = tempDir();
    writeFileSync(keyFilePath(dir), 'not a key\n');
    expect(() => loadOrCreateKeyFile(dir)).toThrow(/secrets\.key holds no secrets key/);
    expect(readFileSync(keyFilePath(dir), 'utf8')).toBe('not a key\n');
  });
});
