import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { canRunPrivatePostgres, PG_BIN } from '../support/private-postgres.ts';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'gcp-backup-'));
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  while (cleanup.length) await cleanup.pop()!();
  rmSync(dir, { recursive: true, force: true });
});

/** What a tenant sees of its money and machines: what a restore must serve again, to the cent. */
const picture = async (api: TestApi, token: string) => ({
  account: (await api.call('GET', '/v1/billing/account', { token })).body,
  ledger: (await api.call('GET', '/v1/billing/ledger', { token })).body,
  instances: (await api.call('GET', '/v1/instances', { token })).body,
});

/** A funded tenant with a rental (the first hour charged) and a deposit. */
async function someHistory(world: RentalWorld): Promise<string> {
  const { token } = await world.fundedTenant(250);
  const node = (await world.offers())[0]!;
  expect((await world.rent(token, { node_id: node.id })).status).toBe(201);
  return token;
}

const sandbox = { providers: [{ name: 'sandbox', config: {} }] };

describe.runIf((await postgresReachable()) && canRunPrivatePostgres())('a PostgreSQL backup (docs/operations.md, Backups)', () => {
  it('pg_dump, then pg_restore into a fresh database: a server on it serves the same accounts, ledger and instances', async () => {
    const source = await freshPostgres();
    cleanup.push(() => source.drop());
    const world = await rentalWorld({}, { database: source });
    cleanup.push(() => world.close());
    const token = await someHistory(world);
    const before = await picture(world.api, token);
    expect(before.ledger.length).toBeGreaterThanOrEqual(2);

    const dump = join(dir, 'gcp.dump');
    const url = (database: TestDatabase) => (database.target as { url: string }).url;
    await run(join(PG_BIN, 'pg_dump'), ['--format=custom', `--file=${dump}`, url(source)]);
    const restored = await freshPostgres();
    cleanup.push(() => restored.drop());
    await run(join(PG_BIN, 'pg_restore'), ['--no-owner', '--exit-on-error', `--dbname=${url(restored)}`, dump]);

    const again = await startApi(sandbox, { database: restored, clock: world.clock });
    cleanup.push(() => again.close());
    expect(await picture(again, token)).toEqual(before);
  });
});

describe('an embedded database backup (docs/operations.md, Backups)', () => {
  // two embedded databases opened one after the other: slow on a loaded machine
  it('its directory copied with the server stopped: a server on the copy serves the same accounts, ledger and instances', { timeout: 120_000 }, async () => {
    const original: TestDatabase = { target: { kind: 'pglite', dataDir: join(dir, 'data') }, drop: async () => undefined };
    const world = await rentalWorld({}, { database: original });
    const token = await someHistory(world);
    const before = await picture(world.api, token);
    expect(before.ledger.length).toBeGreaterThanOrEqual(2);
    await world.close();

    cpSync(join(dir, 'data'), join(dir, 'copy'), { recursive: true });
    const copy: TestDatabase = { target: { kind: 'pglite', dataDir: join(dir, 'copy') }, drop: async () => undefined };
    const again = await startApi(sandbox, { database: copy, clock: world.clock });
    cleanup.push(() => again.close());
    expect(await picture(again, token)).toEqual(before);
  });
});
