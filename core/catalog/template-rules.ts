import { invalidInput } from '../errors.ts';
import { CATALOG_LIMITS } from './limits.ts';
import type { Template } from './records.ts';

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const VOLUME_ID = /^vol_[a-z0-9]+$/;

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;

const noRepeats = (field: string, values: readonly (string | number)[]): void => {
  const seen = new Set<string | number>();
  values.forEach((value, index) => {
    if (seen.has(value)) throw invalidInput(['body', field, index], `${value} is listed twice`);
    seen.add(value);
  });
};

/** A record's name, trimmed: 1 to 200 characters. */
export function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw invalidInput(['body', 'name'], 'must not be blank');
  if (trimmed.length > CATALOG_LIMITS.name) throw invalidInput(['body', 'name'], `at most ${CATALOG_LIMITS.name} characters`);
  return trimmed;
}

/**
 * What a template must hold whoever sends it (the HTTP schema checks the same bounds first; an embedding
 * program or another host reaches this): the limits in CATALOG_LIMITS, each failure naming its field.
 */
export function checkTemplateFields(t: Pick<Template, 'imageId' | 'image' | 'sshKeyIds' | 'env' | 'ports' | 'startupScript' | 'terminationHours' | 'volumeIds'>): void {
  if (t.imageId !== null && t.image !== null) throw invalidInput(['body', 'image'], 'send image_id (a saved image) or image (a reference), not both');
  if (t.sshKeyIds.length > CATALOG_LIMITS.sshKeysPerTemplate) throw invalidInput(['body', 'ssh_key_ids'], `at most ${CATALOG_LIMITS.sshKeysPerTemplate} keys`);
  noRepeats('ssh_key_ids', t.sshKeyIds);

  const env = Object.entries(t.env);
  if (env.length > CATALOG_LIMITS.envEntries) throw invalidInput(['body', 'env'], `at most ${CATALOG_LIMITS.envEntries} variables (${env.length} sent)`);
  for (const [name, value] of env) {
    if (!ENV_NAME.test(name) || name.length > CATALOG_LIMITS.envName) {
      throw invalidInput(['body', 'env', name], `"${name.slice(0, 60)}" is not a variable name: a letter or _, then letters, digits or _ (at most ${CATALOG_LIMITS.envName})`);
    }
    if (typeof value !== 'string') throw invalidInput(['body', 'env', name], 'must be a string');
    if (utf8Bytes(value) > CATALOG_LIMITS.envValueBytes) throw invalidInput(['body', 'env', name], `the value is over ${CATALOG_LIMITS.envValueBytes} bytes`);
  }

  if (t.ports.length > CATALOG_LIMITS.ports) throw invalidInput(['body', 'ports'], `at most ${CATALOG_LIMITS.ports} ports`);
  t.ports.forEach((port, index) => {
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw invalidInput(['body', 'ports', index], 'a port is a whole number from 1 to 65535');
  });
  noRepeats('ports', t.ports);

  if (t.startupScript !== null && utf8Bytes(t.startupScript) > CATALOG_LIMITS.startupScriptBytes) {
    throw invalidInput(['body', 'startup_script'], `at most ${CATALOG_LIMITS.startupScriptBytes / 1024} kB; fetch a longer script from the startup script instead`);
  }
  const hours = t.terminationHours;
  if (hours !== null && !(Number.isInteger(hours) && hours >= 1 && hours <= CATALOG_LIMITS.terminationHours)) {
    throw invalidInput(['body', 'termination_hours'], `a whole number of hours from 1 to ${CATALOG_LIMITS.terminationHours}`);
  }

  if (t.volumeIds.length > CATALOG_LIMITS.volumesPerTemplate) throw invalidInput(['body', 'volume_ids'], `at most ${CATALOG_LIMITS.volumesPerTemplate} volumes`);
  t.volumeIds.forEach((id, index) => {
    if (!VOLUME_ID.test(id)) throw invalidInput(['body', 'volume_ids', index], 'must be a volume id like vol_...');
  });
  noRepeats('volume_ids', t.volumeIds);
}
