import { LockMode, type EntityManager, type InferEntity } from '@mikro-orm/sql';
import type { TokenStore } from '../../../core/ports/storage.ts';
import type { Role } from '../../../core/tenancy/roles.ts';
import type { Scope } from '../../../core/tenancy/scopes.ts';
import type { Token, TokenKind } from '../../../core/tenancy/token.ts';
import { TokenEntity } from '../entities/token.entity.ts';
import { num, textArray } from './sql-rows.ts';

type TokenRow = InferEntity<typeof TokenEntity>;

const toToken = (row: TokenRow): Token => ({
  id: row.id,
  tenantId: row.tenantId,
  kind: row.kind as TokenKind,
  name: row.name ?? null,
  scopes: row.scopes as Scope[],
  spendLimitCents: row.spendLimitCents ?? null,
  committedCents: row.committedCents ?? 0,
  maxRentalHours: row.maxRentalHours ?? null,
  maxBurnCentsPerHour: row.maxBurnCentsPerHour ?? null,
  expiresAt: row.expiresAt ?? null,
  parentId: row.parentId ?? null,
  ancestorIds: row.ancestorIds,
  createdAt: row.createdAt,
  revokedAt: row.revokedAt ?? null,
  secretDigest: row.secretDigest,
  idleTimeoutMinutes: row.idleTimeoutMinutes ?? null,
  idleDeadlineAt: row.idleDeadlineAt ?? null,
  idledAt: row.idledAt ?? null,
  role: (row.role ?? null) as Role | null,
});

export class MikroTokenStore implements TokenStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(token: Token): Promise<void> {
    this.em.create(TokenEntity, { ...token });
    await this.em.flush();
  }

  async findById(tokenId: string): Promise<Token | null> {
    const row = await this.em.findOne(TokenEntity, { id: tokenId });
    return row ? toToken(row) : null;
  }

  async chain(tenantId: string, tokenId: string, options: { lock?: boolean } = {}): Promise<Token[]> {
    const self = await this.em.findOne(TokenEntity, { id: tokenId, tenantId });
    if (!self) return [];
    const ids = [tokenId, ...self.ancestorIds];
    // Rows are locked in id order, so two chains that share ancestors cannot deadlock.
    const rows = await this.em.find(
      TokenEntity,
      { id: { $in: ids }, tenantId },
      options.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: 'asc' }, refresh: true } : { orderBy: { id: 'asc' } },
    );
    const byId = new Map(rows.map((row) => [row.id, toToken(row)]));
    return [tokenId, ...self.ancestorIds.toReversed()].flatMap((id) => byId.get(id) ?? []);
  }

  async chains(tokenIds: readonly string[]): Promise<Map<string, Token[]>> {
    if (tokenIds.length === 0) return new Map();
    // one statement for the tokens and all their ancestors; mapped outside the identity map, so rows this transaction
    // changed by statements of its own (a revocation just made) are read as they now are
    const rows = await this.em.execute<Record<string, unknown>[]>(
      `select t.* from tokens t where t.id in (select unnest(array[r.id] || r.ancestor_ids) from tokens r where r.id = any(?::text[]))`,
      [textArray(tokenIds)],
    );
    const byId = new Map(rows.map((row) => [String(row.id), toToken(this.em.map(TokenEntity, row, { disableIdentityMap: true }))]));
    const chains = new Map<string, Token[]>();
    for (const id of tokenIds) {
      const self = byId.get(id);
      if (self) chains.set(id, [self, ...self.ancestorIds.toReversed().flatMap((ancestor) => byId.get(ancestor) ?? [])]);
    }
    return chains;
  }

  async list(tenantId: string, options: { under?: string } = {}): Promise<Token[]> {
    const where = options.under
      ? { tenantId, $or: [{ id: options.under }, { ancestorIds: { $contains: [options.under] } }] }
      : { tenantId };
    const rows = await this.em.find(TokenEntity, where, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return rows.map(toToken);
  }

  async addCommitment(tokenId: string, cents: number): Promise<void> {
    if (cents === 0) return;
    // the chain is the token plus its stored ancestors, locked in id order as everywhere tokens are locked
    // (an update alone locks in whatever order it scans, and two such orders can deadlock);
    // greatest(0, ...): a release never goes below nothing
    await this.em.execute(
      `with chain as (
         select id from tokens where id = ? or id = any(select unnest(ancestor_ids) from tokens where id = ?) order by id for update
       )
       update tokens t set committed_cents = greatest(0, t.committed_cents + ?) from chain where t.id = chain.id`,
      [tokenId, tokenId, cents],
    );
  }

  async burnCentsPerHour(tenantId: string, tokenIds: readonly string[]): Promise<Map<string, number>> {
    if (tokenIds.length === 0) return new Map();
    // what burns in the tenant (the partial indexes hold only machines and volumes that bill), summed by token and
    // lifted to each ancestor through the stored ancestor_ids: one pass whatever the number of tokens asked about.
    // A volume's rate is storageCentsPerHour: size x GB-hour price, rounded up to the cent once, exact in numeric
    const rows = await this.em.execute<{ id: string; cents: string }[]>(
      `with burning as (
         select token_id, rate_cents_per_hour::numeric as cents from instances
          where tenant_id = ? and status in ('provisioning', 'running', 'rebooting')
         union all
         select token_id, ceil(size_gb * price_usd_per_gb_hour::numeric * 100) from volumes
          where tenant_id = ? and token_id is not null and status in ('creating', 'available', 'attached')
       ),
       by_token as (select t.id, t.ancestor_ids, sum(b.cents) as cents from burning b join tokens t on t.id = b.token_id group by t.id),
       lifted as (select id, cents from by_token union all select a.id, t.cents from by_token t cross join unnest(t.ancestor_ids) as a(id))
       select c.id, coalesce(sum(l.cents), 0)::text as cents from unnest(?::text[]) as c(id) left join lifted l on l.id = c.id group by c.id`,
      [tenantId, tenantId, textArray(tokenIds)],
    );
    return new Map(rows.map((row) => [row.id, num(row.cents)]));
  }

  async revokeSubtree(tenantId: string, tokenId: string, at: Date): Promise<string[]> {
    // the subtree is locked in id order first, the one order every path that locks tokens uses
    const rows = await this.em.execute<{ id: string }[]>(
      `with subtree as (
         select id from tokens where tenant_id = ? and revoked_at is null and (id = ? or ancestor_ids @> array[?]::text[]) order by id for update
       )
       update tokens t set revoked_at = ? from subtree where t.id = subtree.id
       returning t.id`,
      [tenantId, tokenId, tokenId, at],
    );
    return rows.map((row) => row.id);
  }

  async recordActivity(tokenIds: readonly string[], now: Date, coalesceMs: number): Promise<Date | null> {
    // only rows whose deadline would move by coalesceMs or more are locked and written, in id order as everywhere
    // tokens are locked; a token already past its deadline stays there (activity below never revives it). The outer
    // select reads the rows as they were before the update: the moved deadline comes first.
    const [row] = await this.em.execute<{ deadline: Date | string | null }[]>(
      `with due as (
         select id from tokens
          where id = any(?::text[]) and revoked_at is null and idle_deadline_at > ?
            and idle_deadline_at <= ?::timestamptz + make_interval(mins => idle_timeout_minutes) - make_interval(secs => ?)
          order by id for update
       ), moved as (
         update tokens t set idle_deadline_at = ?::timestamptz + make_interval(mins => t.idle_timeout_minutes) from due where t.id = due.id
         returning t.id, t.idle_deadline_at
       )
       select coalesce((select idle_deadline_at from moved where id = ?), (select idle_deadline_at from tokens where id = ?)) as deadline`,
      [textArray(tokenIds), now, now, coalesceMs / 1000, now, tokenIds[0], tokenIds[0]],
    );
    return row?.deadline ? new Date(row.deadline) : null;
  }

  async idleCandidates(now: Date, limit: number): Promise<Token[]> {
    const rows = await this.em.find(
      TokenEntity,
      { idleDeadlineAt: { $lte: now }, revokedAt: null, idledAt: null },
      { orderBy: { idleDeadlineAt: 'asc', id: 'asc' }, limit },
    );
    return rows.map(toToken);
  }

  async lockSubtree(tenantId: string, tokenId: string): Promise<Token[]> {
    const rows = await this.em.find(
      TokenEntity,
      { tenantId, $or: [{ id: tokenId }, { ancestorIds: { $contains: [tokenId] } }] },
      { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: 'asc' }, refresh: true },
    );
    return rows.map(toToken);
  }

  async moveToTop(tenantId: string, nodeId: string): Promise<void> {
    // every row of the subtree drops the node's old ancestors from the front of its own
    await this.em.execute(
      `with node as (select cardinality(ancestor_ids) as depth from tokens where tenant_id = ? and id = ?)
       update tokens t set ancestor_ids = t.ancestor_ids[(select depth from node) + 1:],
                           parent_id = case when t.id = ? then null else t.parent_id end
        where t.tenant_id = ? and (t.id = ? or t.ancestor_ids @> array[?]::text[])`,
      [tenantId, nodeId, nodeId, tenantId, nodeId, nodeId],
    );
  }

  async reshape(tokenId: string, terms: { scopes: Scope[]; role: Role | null; spendLimitCents: number | null; maxRentalHours: number | null }): Promise<void> {
    await this.em.execute(`update tokens set scopes = ?::text[], role = ?, spend_limit_cents = ?, max_rental_hours = ? where id = ?`, [
      textArray(terms.scopes), terms.role, terms.spendLimitCents, terms.maxRentalHours, tokenId,
    ]);
  }

  async markIdle(tenantId: string, tokenIds: readonly string[], at: Date): Promise<string[]> {
    const rows = await this.em.execute<{ id: string }[]>(
      `update tokens set revoked_at = ?, idled_at = ? where tenant_id = ? and id = any(?::text[]) and revoked_at is null returning id`,
      [at, at, tenantId, textArray(tokenIds)],
    );
    return rows.map((row) => row.id);
  }
}
