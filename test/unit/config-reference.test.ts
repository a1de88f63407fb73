import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_REFERENCE } from '../../hosts/composition/config-reference.ts';
import { configurationPage } from '../../hosts/docs/generate.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const documented = new Set(CONFIG_REFERENCE.flatMap((v) => v.names));

/** The sources that read the environment: the composition root and the provider modules. */
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [readFileSync(path, 'utf8')] : [];
  });
const configSources = [...sources(join(ROOT, 'hosts/composition')), ...sources(join(ROOT, 'adapters/providers')), ...sources(join(ROOT, 'hosts/sweep'))].join('\n');

describe('docs/configuration.md cannot drift from the configuration', () => {
  it('documents every variable the configuration schema reads', () => {
    const schema = readFileSync(join(ROOT, 'hosts/composition/config.ts'), 'utf8');
    const envSchema = schema.slice(schema.indexOf('const EnvSchema'), schema.indexOf('export class ConfigError'));
    const read = [...envSchema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    expect(read.length).toBeGreaterThan(25);
    expect(read.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('documents only variables that some code reads', () => {
    expect([...documented].filter((name) => !configSources.includes(name) && !configSources.includes(name.replace(/_[A-Z]+$/, '')))).toEqual([]);
  });

  it('is what npm run docs:generate writes', () => {
    expect(readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8')).toBe(configurationPage());
  });
});
