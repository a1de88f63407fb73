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
  // signed out: the tab no longer holds sessions in other tenants either (sign out revokes them first)
  if (!next) setHeld({});
  for (const listener of listeners) listener();
}

/**
 * The sessions this tab holds in the person's other tenants, by tenant id: switching tenants leaves the session it
 * came from valid (the tokens it issued hang from it), so switching back reuses it and signing out ends them all.
 */
const HELD_KEY = 'gcp.console.held';
let held: Record<string, string> = readHeld();

function readHeld(): Record<string, string> {
  try {
    return JSON.parse(sessionStorage.getItem(HELD_KEY) ?? '{}') as Record<string, string>;
  } catch {
    return {};
  }
}

export const heldSessions = (): Readonly<Record<string, string>> => held;

export function setHeld(next: Record<string, string>): void {
  held = next;
  try {
    if (Object.keys(next).length) sessionStorage.setItem(HELD_KEY, JSON.stringify(next));
    else sessionStorage.removeItem(HELD_KEY);
  } catch {
    /* memory only */
  }
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
