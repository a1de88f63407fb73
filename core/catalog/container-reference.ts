import { CATALOG_LIMITS } from './limits.ts';

/**
 * A container image reference as the distribution project's grammar defines it
 * (github.com/distribution/reference, reference.go):
 *
 *   reference   := name [ ":" tag ] [ "@" digest ]
 *   name        := [domain "/"] path-component ["/" path-component]*
 *   domain      := host [":" port]; host := domain-name | "[" IPv6 "]"
 *   path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := [_.] | "__" | "-"+
 *   tag         := [\w][\w.-]{0,127}
 *   digest      := algorithm ":" hex
 *
 * The first component is the registry when it has a dot or a colon, is "localhost", or has upper-case letters
 * (as Docker reads it); the name is at most 255 characters. Digests are the ones registries compute: sha256
 * (64 hex digits), sha384 (96) and sha512 (128), lower case.
 */
const DOMAIN_COMPONENT = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST_HEX: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };
const NAME_MAX = 255;

export interface ContainerReference {
  /** The registry host (and port), when the reference names one; null: the runtime's default (Docker Hub). */
  domain: string | null;
  /** The repository path within the registry. */
  path: string;
  tag: string | null;
  digest: string | null;
}

export type ContainerReferenceParse = { ok: true; reference: ContainerReference } | { ok: false; reason: string };

const EXAMPLE = 'e.g. pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime or ghcr.io/acme/trainer@sha256:<64 hex digits>';

function domainProblem(domain: string): string | null {
  let host = domain;
  const port = /:(\d*)$/.exec(domain);
  if (port && !domain.endsWith(']')) {
    if (!/^\d{1,5}$/.test(port[1]!) || Number(port[1]) > 65_535) return `the registry port in "${domain}" must be a number from 0 to 65535`;
    host = domain.slice(0, port.index);
  }
  if (host.startsWith('[')) {
    return /^\[[0-9A-Fa-f:.]+\]$/.test(host) && host.includes(':') ? null : `the registry "${domain}" is not a bracketed IPv6 address`;
  }
  if (!host.split('.').every((part) => DOMAIN_COMPONENT.test(part))) {
    return `the registry "${domain}" is not a host name (letters, digits and inner hyphens, dot-separated) with an optional :port`;
  }
  return null;
}

/** Parses a reference, or says which part of it breaks the grammar. */
export function parseContainerReference(input: string): ContainerReferenceParse {
  const fail = (reason: string): ContainerReferenceParse => ({ ok: false, reason: `${reason}; ${EXAMPLE}` });
  if (input.length === 0) return fail('must not be empty');
  if (input.length > CATALOG_LIMITS.imageReference) return fail(`is over ${CATALOG_LIMITS.imageReference} characters`);
  if (/\s/.test(input)) return fail('must not contain spaces');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) return fail('is an image reference, not a URL: leave out the scheme (https://)');

  let rest = input;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    const [algorithm = '', hex = '', ...extra] = digest.split(':');
    const length = DIGEST_HEX[algorithm];
    if (length === undefined || extra.length > 0) return fail(`the digest "${digest.slice(0, 80)}" must be sha256:, sha384: or sha512: and the hex digits`);
    if (hex.length !== length || !/^[0-9a-f]+$/.test(hex)) return fail(`a ${algorithm} digest is ${length} lower-case hex digits`);
  }

  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return fail(`the tag "${tag.slice(0, 140)}" must be 1 to 128 letters, digits, _, . or -, not starting with . or -`);
  }

  if (rest.length === 0) return fail('has no repository name');
  if (rest.length > NAME_MAX) return fail(`the repository name is over ${NAME_MAX} characters`);
  const components = rest.split('/');
  let domain: string | null = null;
  const first = components[0]!;
  if (components.length > 1 && (/[.:]/.test(first) || first === 'localhost' || first !== first.toLowerCase())) {
    domain = first;
    components.shift();
    const problem = domainProblem(domain);
    if (problem) return fail(problem);
  }
  for (const component of components) {
    if (component.length === 0) return fail('the repository name has an empty part (two slashes, or a slash at an end)');
    if (component !== component.toLowerCase()) return fail(`the repository name must be lower case ("${component.slice(0, 80)}")`);
    if (!PATH_COMPONENT.test(component)) {
      return fail(`"${component.slice(0, 80)}" is not a repository name part: lower-case letters and digits, separated by ".", "_", "__" or "-"`);
    }
  }
  return { ok: true, reference: { domain, path: components.join('/'), tag, digest } };
}
