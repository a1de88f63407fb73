import { useEffect, useId, useState } from 'preact/hooks';
import type { Schema } from '../../client/api-client.ts';
import { api, clientFor, run, type ApiError } from './api.ts';
import { heldSessions, onSessionChange, sessionToken, setHeld, setSession } from './session.ts';

export type PersonTenant = Schema<'PersonTenantOut'>;

/** Who shows the tenant switch reads the list again when the person joins a tenant (an invitation accepted). */
const listeners = new Set<() => void>();
export const tenantsChanged = (): void => listeners.forEach((l) => l());

/**
 * A session of the same person in another of their tenants (docs/sign-in.md, "Several tenants"): one this tab holds
 * from an earlier switch when it still works, else a new one (POST /v1/auth/switch). The session left stays valid
 * and held (the tokens it issued hang from it); every held session is revoked at sign out.
 */
export async function switchTenant(to: string, from: string): Promise<ApiError | null> {
  const current = sessionToken();
  let next: string | null = null;
  const kept = heldSessions()[to];
  if (kept) {
    const self = await run(clientFor(kept).GET('/v1/tokens/self'));
    if (self.data?.tenant_id === to) next = kept;
  }
  if (!next) {
    const answer = await run(api().POST('/v1/auth/switch', { body: { tenant_id: to } }));
    if (answer.error) return answer.error;
    next = answer.data.token ?? null;
    if (!next) return { status: 0, detail: 'the switch answered no session' };
  }
  const others = { ...heldSessions() };
  delete others[to];
  if (current) others[from] = current;
  setHeld(others);
  setSession(next);
  return null;
}

/** Ends every session this tab holds in other tenants (sign out); the current one is the caller's to end. */
export async function revokeHeld(): Promise<void> {
  await Promise.all(
    Object.values(heldSessions()).map(async (token) => {
      const client = clientFor(token);
      const self = await run(client.GET('/v1/tokens/self'));
      if (self.data) await run(client.DELETE('/v1/tokens/{token_id}', { params: { path: { token_id: self.data.id } } }));
    }),
  );
}

/** The tenant switch of the header (an item of its list): shown when the signed-in person belongs to more than one tenant. */
export function TenantSwitch() {
  const [tenants, setTenants] = useState<PersonTenant[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();
  useEffect(() => {
    const load = async () => {
      // an API token pasted into the tab has no person behind it: 403, and nothing to switch
      const answer = sessionToken() ? await run(api().GET('/v1/auth/tenants')) : { data: [] };
      setTenants(answer.data ?? []);
    };
    void load();
    listeners.add(load);
    const unsubscribe = onSessionChange(() => void load());
    return () => {
      listeners.delete(load);
      unsubscribe();
    };
  }, []);
  if (!tenants || tenants.length < 2) return null;
  const current = tenants.find((t) => t.current);
  const change = async (to: string) => {
    if (!current || to === current.tenant_id) return;
    setBusy(true);
    setError(null);
    const failed = await switchTenant(to, current.tenant_id);
    setBusy(false);
    if (failed) setError(failed);
  };
  return (
    <li class="tenant-switch">
      <label for={id}>Tenant</label>{' '}
      <select id={id} value={current?.tenant_id} disabled={busy} aria-busy={busy} onChange={(e) => void change((e.target as HTMLSelectElement).value)}>
        {tenants.map((t) => (
          <option key={t.tenant_id} value={t.tenant_id}>
            {t.name} ({t.role})
          </option>
        ))}
      </select>
      {error && (
        <span class="error-inline" role="alert">
          {' '}
          {error.detail}
        </span>
      )}
    </li>
  );
}
