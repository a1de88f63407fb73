import { describe, expect, it } from 'vitest';
import { parseContainerReference } from '../../core/catalog/container-reference.ts';

const SHA256 = `sha256:${'0123456789abcdef'.repeat(4)}`;

describe('container references (distribution/reference grammar)', () => {
  it.each([
    ['ubuntu', { domain: null, path: 'ubuntu', tag: null, digest: null }],
    ['ubuntu:24.04', { domain: null, path: 'ubuntu', tag: '24.04', digest: null }],
    ['pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime', { domain: null, path: 'pytorch/pytorch', tag: '2.5.1-cuda12.4-cudnn9-runtime', digest: null }],
    ['ghcr.io/acme/team/trainer:v1', { domain: 'ghcr.io', path: 'acme/team/trainer', tag: 'v1', digest: null }],
    [`nvcr.io/nvidia/pytorch:24.10-py3@${SHA256}`, { domain: 'nvcr.io', path: 'nvidia/pytorch', tag: '24.10-py3', digest: SHA256 }],
    [`registry.example.com:5000/a/b@${SHA256}`, { domain: 'registry.example.com:5000', path: 'a/b', tag: null, digest: SHA256 }],
    ['localhost/my_app__x.y-z:latest', { domain: 'localhost', path: 'my_app__x.y-z', tag: 'latest', digest: null }],
    ['[::1]:5000/app', { domain: '[::1]:5000', path: 'app', tag: null, digest: null }],
    ['MyRegistry/app', { domain: 'MyRegistry', path: 'app', tag: null, digest: null }],
    ['a--b/c', { domain: null, path: 'a--b/c', tag: null, digest: null }],
  ])('reads %s', (text, reference) => {
    expect(parseContainerReference(text)).toEqual({ ok: true, reference });
  });

  it.each([
    ['', /must not be empty/],
    ['Ubuntu', /lower case/],
    ['acme/Trainer', /lower case/],
    ['ubuntu:', /tag ""/],
    ['ubuntu:-x', /tag "-x"/],
    [`ubuntu:${'x'.repeat(129)}`, /tag/],
    ['ubuntu@sha256:abc', /64 lower-case hex digits/],
    [`ubuntu@sha256:${'A'.repeat(64)}`, /lower-case hex/],
    [`ubuntu@md5:${'0'.repeat(32)}`, /sha256:, sha384: or sha512:/],
    ['ubuntu 24.04', /spaces/],
    ['https://ghcr.io/acme/app', /not a URL/],
    ['acme//app', /empty part/],
    ['acme/app/', /empty part/],
    ['-acme/app', /not a repository name part/],
    ['acme/a..b', /not a repository name part/],
    ['bad_host.com/app', /not a host name/],
    ['registry.io:99999/app', /port/],
    [`${'a'.repeat(256)}`, /over 255 characters/],
    ['x'.repeat(600), /over 512 characters/],
  ])('refuses %s', (text, reason) => {
    const parsed = parseContainerReference(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });
});
