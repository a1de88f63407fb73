import type { EntityManager } from '@mikro-orm/sql';
import type { Template, TemplateSearch } from '../../../core/catalog/records.ts';
import type { TemplateStore } from '../../../core/ports/catalog-storage.ts';
import { date, num, numOrNull, textArray, textOrNull, type Row } from './sql-rows.ts';

// arrays leave as JSON, which every driver hands back the same way (parsed, or text to parse)
const COLUMNS = `id, tenant_id, name, image_id, image, to_json(ssh_key_ids) as ssh_key_ids, env, to_json(ports) as ports,
  startup_script, termination_hours, to_json(volume_ids) as volume_ids, search, token_id, created_at`;

const json = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

const toTemplate = (row: Row): Template => ({
  id: String(row.id),
  tenantId: String(row.tenant_id),
  name: String(row.name),
  imageId: textOrNull(row.image_id),
  image: textOrNull(row.image),
  sshKeyIds: json<string[]>(row.ssh_key_ids),
  env: json<Record<string, string>>(row.env),
  ports: json<unknown[]>(row.ports).map(num),
  startupScript: textOrNull(row.startup_script),
  terminationHours: numOrNull(row.termination_hours),
  volumeIds: json<string[]>(row.volume_ids),
  search: json<TemplateSearch>(row.search),
  tokenId: textOrNull(row.token_id),
  createdAt: date(row.created_at),
});

const ports = (values: readonly number[]): string => `{${values.join(',')}}`;

export class MikroTemplateStore implements TemplateStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async add(t: Template): Promise<void> {
    await this.em.execute(
      `insert into templates (id, tenant_id, name, image_id, image, ssh_key_ids, env, ports, startup_script, termination_hours, volume_ids, search, token_id, created_at)
       values (?, ?, ?, ?, ?, ?::text[], ?::jsonb, ?::integer[], ?, ?, ?::text[], ?::jsonb, ?, ?)`,
      [
        t.id, t.tenantId, t.name, t.imageId, t.image, textArray(t.sshKeyIds), JSON.stringify(t.env), ports(t.ports),
        t.startupScript, t.terminationHours, textArray(t.volumeIds), JSON.stringify(t.search), t.tokenId, t.createdAt,
      ],
    );
  }

  async get(tenantId: string, templateId: string): Promise<Template | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from templates where tenant_id = ? and id = ?`, [tenantId, templateId]);
    return row ? toTemplate(row) : null;
  }

  async list(tenantId: string): Promise<Template[]> {
    const rows = await this.em.execute<Row[]>(`select ${COLUMNS} from templates where tenant_id = ? order by created_at, id`, [tenantId]);
    return rows.map(toTemplate);
  }

  async lock(tenantId: string, templateId: string): Promise<Template | null> {
    const [row] = await this.em.execute<Row[]>(`select ${COLUMNS} from templates where tenant_id = ? and id = ? for update`, [tenantId, templateId]);
    return row ? toTemplate(row) : null;
  }

  async update(t: Template): Promise<void> {
    await this.em.execute(
      `update templates set name = ?, image_id = ?, image = ?, ssh_key_ids = ?::text[], env = ?::jsonb, ports = ?::integer[], startup_script = ?,
         termination_hours = ?, volume_ids = ?::text[], search = ?::jsonb
       where tenant_id = ? and id = ?`,
      [
        t.name, t.imageId, t.image, textArray(t.sshKeyIds), JSON.stringify(t.env), ports(t.ports), t.startupScript,
        t.terminationHours, textArray(t.volumeIds), JSON.stringify(t.search), t.tenantId, t.id,
      ],
    );
  }

  async remove(tenantId: string, templateId: string): Promise<void> {
    await this.em.execute(`delete from templates where tenant_id = ? and id = ?`, [tenantId, templateId]);
  }

  async usingImage(tenantId: string, imageId: string): Promise<string[]> {
    const rows = await this.em.execute<Row[]>(`select id from templates where tenant_id = ? and image_id = ? order by id`, [tenantId, imageId]);
    return rows.map((row) => String(row.id));
  }

  async usingSshKey(tenantId: string, keyId: string): Promise<string[]> {
    const rows = await this.em.execute<Row[]>(`select id from templates where tenant_id = ? and ssh_key_ids @> array[?]::text[] order by id`, [tenantId, keyId]);
    return rows.map((row) => String(row.id));
  }
}
