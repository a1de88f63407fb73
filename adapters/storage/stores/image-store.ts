import type { EntityManager } from '@mikro-orm/sql';
import type { Image } from '../../../core/catalog/records.ts';
import type { ImageStore } from '../../../core/ports/catalog-storage.ts';
import { date, textOrNull, type Row } from './sql-rows.ts';

const COLUMNS = 'id, tenant_id, name, image, registry_username, registry_password_sealed, command, token_id, created_at';

const toImage = (row: Row): Image => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  name: String(row.name),
  image: String(row.image),
  registryUsername: textOrNull(row.registry_username),
  registryPasswordSealed: textOrNull(row.registry_password_sealed),
  command: textOrNull(row.command),
  tokenId: textOrNull(row.token_id),
  createdAt: date(row.created_at),
});

export class MikroImageStore implements ImageStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(i: Image): Promise<void> {
    await this.em.execute(`insert into images (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      i.id, i.tenantId, i.name, i.image, i.registryUsername, i.registryPasswordSealed, i.command, i.tokenId, i.createdAt,
    ]);
  }

  async get(tenantId: string, imageId: string): Promise<Image | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from images where tenant_id = ? and id = ?`, [tenantId, imageId]);
    return row ? toImage(row) : null;
  }

  async list(tenantId: string): Promise<Image[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from images where tenant_id = ? order by created_at, id`, [tenantId]);
    return rows.map(toImage);
  }

  async hold(tenantId: string, imageId: string): Promise<Image | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from images where tenant_id = ? and id = ? for key share`, [tenantId, imageId]);
    return row ? toImage(row) : null;
  }

  async lock(tenantId: string, imageId: string): Promise<Image | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from images where tenant_id = ? and id = ? for update`, [tenantId, imageId]);
    return row ? toImage(row) : null;
  }

  async update(i: Image): Promise<void> {
    await this.em.execute(
      `update images set name = ?, image = ?, registry_username = ?, registry_password_sealed = ?, command = ? where tenant_id = ? and id = ?`,
      [i.name, i.image, i.registryUsername, i.registryPasswordSealed, i.command, i.tenantId, i.id],
    );
  }

  async remove(tenantId: string, imageId: string): Promise<void> {
    await this.em.execute(`delete from images where tenant_id = ? and id = ?`, [tenantId, imageId]);
  }

  async anySealed(): Promise<{ imageId: string; sealed: string } | null> {
    const [row] = await this.em.execute<Row[]>(`select id, registry_password_sealed from images where registry_password_sealed is not null limit 1`);
    return row ? { imageId: String(row.id), sealed: String(row.registry_password_sealed) } : null;
  }
}
