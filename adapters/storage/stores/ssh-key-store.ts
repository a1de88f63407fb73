import type { EntityManager } from '@mikro-orm/sql';
import type { SshKey } from '../../../core/catalog/records.ts';
import type { SshKeyStore } from '../../../core/ports/catalog-storage.ts';
import { date, textArray, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = 'id, tenant_id, name, public_key, key_type, fingerprint, token_id, created_at';

const toKey = (row: Row): SshKey => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  name: String(row.name),
  publicKey: String(row.public_key),
  keyType: String(row.key_type),
  fingerprint: String(row.fingerprint),
  tokenId: textOrNull(row.token_id),
  createdAt: date(row.created_at),
});

export class MikroSshKeyStore implements SshKeyStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(k: SshKey): Promise<SshKey | null> {
    // a concurrent save of the same key waits for the other transaction, then adds nothing
    const added = await this.em.execute<Row[]>(
      `insert into ssh_keys (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (tenant_id, fingerprint) do nothing returning id`,
      [k.id, k.tenantId, k.name, k.publicKey, k.keyType, k.fingerprint, k.tokenId, k.createdAt],
    );
    if (added.length === 1) return null;
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from ssh_keys where tenant_id = ? and fingerprint = ?`, [k.tenantId, k.fingerprint]);
    return row ? toKey(row) : null;
  }

  async get(tenantId: string, keyId: string): Promise<SshKey | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from ssh_keys where tenant_id = ? and id = ?`, [tenantId, keyId]);
    return row ? toKey(row) : null;
  }

  async list(tenantId: string): Promise<SshKey[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from ssh_keys where tenant_id = ? order by created_at, id`, [tenantId]);
    return rows.map(toKey);
  }

  async many(tenantId: string, keyIds: readonly string[], options: { hold?: boolean } = {}): Promise<SshKey[]> {
    if (keyIds.length === 0) return [];
    // FOR KEY SHARE in id order: templates saved at once never deadlock, and a delete (FOR UPDATE) waits for them
    const rows = await this.em.execute<Row[]>(
      `select ${COLUMNS} from ssh_keys where tenant_id = ? and id = any(?::text[]) order by id${options.hold ? ' for key share' : ''}`,
      [tenantId, textArray(keyIds)],
    );
    return rows.map(toKey);
  }

  async lock(tenantId: string, keyId: string): Promise<SshKey | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from ssh_keys where tenant_id = ? and id = ? for update`, [tenantId, keyId]);
    return row ? toKey(row) : null;
  }

  async remove(tenantId: string, keyId: string): Promise<void> {
    await this.em.execute(`delete from ssh_keys where tenant_id = ? and id = ?`, [tenantId, keyId]);
  }
}
