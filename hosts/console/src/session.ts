/**
 * The console session token: in memory, and in sessionStorage so a reload in the same tab keeps it. Never
 * localStorage: a session must not outlive the tab or be readable from other tabs later.
 */
const KEY = 'gcp.console.session';

let token: string | null = read();
const listeners = new Set<() => void>();

function read(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null; // storage disabled: memory only
  }
}

export const sessionToken = (): string | null => token;

export function setSession(next: string | null): void {
  token = next;
  try {
    if (next) sessionStorage.setItem(KEY, next);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* memory only */
  }
  for (const listener of listeners) listener();
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
