import type { CodeHost } from '../../../core/ports/code-host.ts';
import { GithubCodeHost } from './adapter.ts';
import { GithubClient } from './client.ts';
import { DEFAULT_GITHUB_API_URL, DEFAULT_GITHUB_URL, type GithubCodeHostConfig } from './config.ts';

export { DEFAULT_GITHUB_API_URL, DEFAULT_GITHUB_URL, fromEnv, type GithubCodeHostConfig } from './config.ts';
export { GithubCodeHost } from './adapter.ts';
export { GithubHttpError, GithubTransportError } from './client.ts';
export { GithubOAuthError } from './mapping.ts';

export function createGithubCodeHost(config: GithubCodeHostConfig): CodeHost {
  if (!config.clientId) throw new Error('github: clientId is required');
  const client = new GithubClient({
    githubUrl: config.githubUrl ?? DEFAULT_GITHUB_URL,
    apiUrl: config.apiUrl ?? DEFAULT_GITHUB_API_URL,
    timeoutMs: config.timeoutMs ?? 10_000,
    retries: config.retries ?? 2,
    retryBaseMs: config.retryBaseMs ?? 200,
    userAgent: 'gpu-control-plane',
  });
  return new GithubCodeHost(client, {
    clientId: config.clientId,
    memoryLimit: config.memoryLimit ?? 10_000,
    now: config.now ?? Date.now,
  });
}

