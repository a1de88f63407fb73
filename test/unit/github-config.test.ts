import { describe, expect, it } from 'vitest';
import { fromEnv } from '../../adapters/identity/github/index.ts';

describe('github fromEnv', () => {
  it('is off without GITHUB_CLIENT_ID', () => {
    expect(fromEnv({})).toBeNull();
    expect(fromEnv({ GITHUB_CLIENT_ID: '  ' })).toBeNull();
  });

  it('GITHUB_CLIENT_ID enables it, with github.com and api.github.com by default', () => {
    expect(fromEnv({ GITHUB_CLIENT_ID: ' Ov23liAbCdEf12345678 ' })).toEqual({
      clientId: 'Ov23liAbCdEf12345678',
      githubUrl: 'https://github.com',
      apiUrl: 'https://api.github.com',
    });
  });

  it('GITHUB_URL and GITHUB_API_URL move it (GitHub Enterprise Server, a fake)', () => {
    expect(
      fromEnv({ GITHUB_CLIENT_ID: 'Iv1.0123456789abcdef', GITHUB_URL: 'https://ghe.example.com', GITHUB_API_URL: 'https://ghe.example.com/api/v3' }),
    ).toEqual({ clientId: 'Iv1.0123456789abcdef', githubUrl: 'https://ghe.example.com', apiUrl: 'https://ghe.example.com/api/v3' });
  });

  it('a URL that is not http(s) is refused, naming the variable', () => {
    expect(() => fromEnv({ GITHUB_CLIENT_ID: 'abc', GITHUB_URL: 'github.com' })).toThrow(/^GITHUB_URL: must be an http\(s\) URL/);
    expect(() => fromEnv({ GITHUB_CLIENT_ID: 'abc', GITHUB_API_URL: 'ftp://api.github.com' })).toThrow(/^GITHUB_API_URL: must be an http\(s\) URL/);
  });

  it('a URL without the client id is a half-made setup, and the error names GITHUB_CLIENT_ID', () => {
    expect(() => fromEnv({ GITHUB_URL: 'https://ghe.example.com' })).toThrow(/^GITHUB_URL: set, but GITHUB_CLIENT_ID is not/);
    expect(() => fromEnv({ GITHUB_API_URL: 'https://api.example.com' })).toThrow(/^GITHUB_API_URL: set, but GITHUB_CLIENT_ID is not/);
  });

  it('a client id with spaces or other characters is refused, naming the variable', () => {
    expect(() => fromEnv({ GITHUB_CLIENT_ID: 'my app' })).toThrow(/^GITHUB_CLIENT_ID: /);
    expect(() => fromEnv({ GITHUB_CLIENT_ID: 'id;rm' })).toThrow(/^GITHUB_CLIENT_ID: /);
  });
});
