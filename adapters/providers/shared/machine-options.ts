import type { CreateMachineRequest, MachineOption } from '../../../core/ports/providers.ts';

/** The options a create asks for, in MACHINE_OPTIONS terms: a field left empty asks for nothing. */
export function requestedOptions(request: CreateMachineRequest): MachineOption[] {
  const asked: [MachineOption, boolean][] = [
    ['custom_image', request.image !== null],
    ['registry_auth', request.registryAuth !== null],
    ['command', request.command !== null],
    ['env', Object.keys(request.env).length > 0],
    ['ports', request.ports.length > 0],
    ['startup_script', request.startupScript !== null],
    ['ssh_keys', request.sshPublicKeys.length > 0],
    ['volumes', request.volumeIds.length > 0],
  ];
  return asked.filter(([, yes]) => yes).map(([option]) => option);
}

/**
 * What a create asks for that this adapter does not carry out. The control plane checks machineOptions before
 * it rents; an adapter still refuses rather than drop an option silently (a machine without the asked-for key
 * or volume is worse than no machine).
 */
export const unsupportedOptions = (request: CreateMachineRequest, supported: readonly MachineOption[]): MachineOption[] =>
  requestedOptions(request).filter((option) => !supported.includes(option));

/** A name an environment variable may have in a shell and in Docker's `-e`. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why these env names, ports or keys cannot be passed on, or null when they can. */
export function optionValuesProblem(request: CreateMachineRequest): string | null {
  for (const name of Object.keys(request.env)) if (!ENV_NAME.test(name)) return `"${name}" is not an environment variable name`;
  for (const port of request.ports) if (!Number.isInteger(port) || port < 1 || port > 65_535) return `port ${port} is not from 1 to 65535`;
  for (const key of request.sshPublicKeys) if (key.trim() === '' || /[\r\n\0]/.test(key.trim())) return 'each SSH public key must be one non-empty line';
  return null;
}

/**
 * The registry host of a container reference, as Docker resolves it: the first path part when it has a dot or
 * a port or is localhost ("ghcr.io/org/x:1"), else Docker Hub ("pytorch/pytorch", "ubuntu").
 */
export function registryOf(image: string): string {
  const slash = image.indexOf('/');
  if (slash < 0) return 'docker.io';
  const first = image.slice(0, slash);
  return first.includes('.') || first.includes(':') || first === 'localhost' ? first : 'docker.io';
}
