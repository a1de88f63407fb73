import { LockMode, type EntityManager, type InferEntity } from '@mikro-orm/sql';
import type { TokenStore } from '../../../core/ports/storage.ts';
import type { Scope } from '../../../core/tenancy/scopes.ts';
import type { Token } from '../../../core/tenancy/token.ts';
import { TokenEntity } from '../entities/token.entity.ts';

type TokenRow = InferEntity<typeof TokenEntity>;

const toToken = (row: TokenRow): Token => ({
  id: row.id,
  tenantId: row.tenantId,
  name: row.name ?? null,
  scopes: row.scopes as Scope[],
  spendLimitCents: row.spendLimitCents ?? null,
  committedCents: row.committedCents ?? 0,
  maxRentalHours: row.maxRentalHours ?? null,
  expiresAt: row.expiresAt ?? null,
  parentId: row.parentId ?? null,
  ancestorIds: row.ancestorIds,
  createdAt: row.createdAt,
  revokedAt: row.revokedAt ?? null,
  secretDigest: row.secretDigest,
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

  async list(tenantId: string, options: { under?: string } = {}): Promise<Token[]> {
    const where = options.under
      ? { tenantId, $or: [{ id: options.under }, { ancestorIds: { $contains: [options.under] } }] }
      : { tenantId };
    const rows = await this.em.find(TokenEntity, where, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return rows.map(toToken);
  }

  async addCommitment(tokenId: string, cents: number): Promise<void> {
    if (cents === 0) return;
    // the chain is the token plus its stored ancestors; greatest(0, ...): a release never goes below nothing
    await this.em.execute(
      `update tokens set committed_cents = greatest(0, committed_cents + ?)
        where id = ? or id = any(select unnest(ancestor_ids) from tokens where id = ?)`,
      [cents, tokenId, tokenId],
    );
  }

  async revokeSubtree(tenantId: string, tokenId: string, at: Date): Promise<string[]> {
    const rows = await this.em.execute<{ id: string }[]>(
      `update tokens set revoked_at = ?
        where tenant_id = ? and revoked_at is null and (id = ? or ancestor_ids @> array[?]::text[])
        returning id`,
      [at, tenantId, tokenId, tokenId],
    );
    return rows.map((row) => row.id);
  }
}
