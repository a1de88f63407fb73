import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';

/** Probes share one answer for a second (hosts/composition/readiness.ts): each step waits it out. */
const PROBE_KEPT_MS = 1_100;
const settle = () => new Promise((resolve) => setTimeout(resolve, PROBE_KEPT_MS));

const onPostgres = await postgresReachable();

describe.runIf(onPostgres)('GET /readyz on PostgreSQL', () => {
  let database: TestDatabase;
  let api: TestApi;
  let sql: pg.Client;

  beforeAll(async () => {
    database = await freshPostgres();
    api = await startApi({}, { database });
    sql = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql.end().catch(() => undefined);
    await api.close();
    await database.drop();
  });

  it('is 503 until the market has offers, then 200 {status: ready} with every check', async () => {
    const before = await api.call('GET', '/readyz');
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({ status: 'not_ready', checks: { database: { ok: true }, migrations: { ok: true, detail: 'current' }, snapshots: { ok: false } } });
    expect(before.body.detail).toMatch(/^not ready: snapshots: no provider's offers are served yet: sandbox/);

    await api.plane.services.market.refreshDue();
    await settle();
    const after = await api.call('GET', '/readyz');
    expect(after.status).toBe(200);
    expect(after.body).toEqual({
      status: 'ready',
      checks: {
        database: { ok: true, detail: 'answers' },
        migrations: { ok: true, detail: 'current' },
        snapshots: { ok: true, detail: 'offers served from sandbox' },
      },
    });
    // /healthz beside it is untouched: liveness, no dependency
    expect((await api.call('GET', '/healthz')).body.status).toBe('ok');
  });

  it('is 503 naming the migrations when the schema is behind this build or ahead of it', async () => {
    const { rows } = await sql.query<{ id: number; name: string }>('select id, name from mikro_orm_migrations order by id desc limit 1');
    const last = rows[0]!;
    await sql.query('delete from mikro_orm_migrations where id = $1', [last.id]);
    try {
      await settle();
      const behind = await api.call('GET', '/readyz');
      expect(behind.status).toBe(503);
      expect(behind.body.checks.migrations).toEqual({ ok: false, detail: `migrations not applied: ${last.name}` });
      expect(behind.body.detail).toContain(`migrations: migrations not applied: ${last.name}`);
    } finally {
      await sql.query('insert into mikro_orm_migrations (id, name, executed_at) values ($1, $2, now())', [last.id, last.name]);
    }

    await sql.query(`insert into mikro_orm_migrations (name, executed_at) values ('9999-from-a-newer-version', now())`);
    try {
      await settle();
      const ahead = await api.call('GET', '/readyz');
      expect(ahead.status).toBe(503);
      expect(ahead.body.checks.migrations.detail).toMatch(/does not know: 9999-from-a-newer-version/);
    } finally {
      await sql.query(`delete from mikro_orm_migrations where name = '9999-from-a-newer-version'`);
    }
    await settle();
    expect((await api.call('GET', '/readyz')).status).toBe(200);
  });

  it('is 503 naming the database when it cannot be reached, and answers within the probe timeout', async () => {
    await sql.end();
    // the database goes away under the running server: its pooled connections are cut, new ones refused
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
    await admin.connect();
    const name = new URL((database.target as { url: string }).url).pathname.slice(1);
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
    await settle();
    const started = performance.now();
    const down = await api.call('GET', '/readyz');
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(down.status).toBe(503);
    expect(down.body.checks.database.ok).toBe(false);
    expect(down.body.checks.migrations).toEqual({ ok: false, detail: 'not checked: the database does not answer' });
    expect(down.body.detail).toMatch(/^not ready: database: /);
    // liveness does not depend on the database
    expect((await api.call('GET', '/healthz')).status).toBe(200);
  });
});
