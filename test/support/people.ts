import { expect } from 'vitest';
import type { ApiResponse } from './api.ts';
import type { RentalWorld } from './rentals.ts';
import type { ReceivedMail, SmtpInbox } from './smtp-inbox.ts';

/** The password every test person signs up with. */
export const PASSWORD = 'Correct-Horse-Battery-9';

type Call = (method: string, path: string, token?: string, body?: unknown) => Promise<ApiResponse>;

/**
 * People made through the API's own sign-up, their mail read from a real SMTP inbox, each message handed out once (so
 * a second invitation to an address is read as the second): fresh addresses, confirmed accounts, sign-ins.
 */
export function peopleOver(inbox: SmtpInbox, call: Call) {
  const handedOut = new Set<ReceivedMail>();
  let seq = 0;
  const address = (name: string) => `${name}.${Date.now().toString(36)}${seq++}@example.com`;
  async function mailTo(to: string, subject: RegExp): Promise<ReceivedMail> {
    const mail = await inbox.next((m) => !handedOut.has(m) && m.to.includes(to) && subject.test(m.subject), 10_000);
    handedOut.add(mail);
    return mail;
  }
  /** A new account with a confirmed address; answers the address. */
  async function person(name: string): Promise<string> {
    const email = address(name);
    expect((await call('POST', '/v1/auth/sign-up', undefined, { email, password: PASSWORD })).status).toBe(200);
    const code = /\b(\d{6})\b/.exec((await mailTo(email, /confirmation/)).text)![1]!;
    expect((await call('POST', '/v1/auth/confirm-email', undefined, { email, code })).status).toBe(200);
    return email;
  }
  const signIn = (email: string, tenantId?: string) => call('POST', '/v1/auth/sign-in', undefined, { email, password: PASSWORD, ...(tenantId && { tenant_id: tenantId }) });
  return { address, mailTo, person, signIn };
}

/** A tenant's people and tokens over HTTP, for tests that link people with a root bearer (as an owner or admin does). */
export interface People {
  call: Call;
  /** A new person's confirmed address. */
  person(name: string): Promise<string>;
  /** Signs the person in; with a root bearer, links them into its tenant (answers the session either way). */
  signIn(email: string, bearer?: string): Promise<ApiResponse>;
  /** A token issued by `parent` with these terms. */
  child(parent: string, terms: Record<string, unknown>): Promise<{ token: string; id: string }>;
  /** The tenant's people, as root (or any credential managing the tenant) reads them. */
  people(token: string): Promise<{ id: string; email: string; role: string; spend_limit_cents: number | null }[]>;
  /** A tenant funded with `usd` whose owner is a person signed in: the owner's session and the root token. */
  ownedTenant(usd?: number): Promise<{ root: string; owner: string; ownerEmail: string; tenantId: string }>;
}

/** People of the world's tenants, the world and the inbox made before the first test (hence the getters). */
export function peopleOf(world: () => RentalWorld, inbox: () => SmtpInbox): People {
  const call: Call = (method, path, token, body) => world().api.call(method, path, { ...(token && { token }), ...(body !== undefined && { body }) });
  let over: ReturnType<typeof peopleOver> | null = null;
  const person = (name: string) => (over ??= peopleOver(inbox(), call)).person(name);
  const signIn = (email: string, bearer?: string) => call('POST', '/v1/auth/sign-in', bearer, { email, password: PASSWORD });
  return {
    call,
    person,
    signIn,
    async child(parent, terms) {
      const made = await call('POST', '/v1/tokens', parent, { name: 'child', ...terms });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      return { token: made.body.token, id: made.body.id };
    },
    people: async (token) => (await call('GET', '/v1/identities', token)).body,
    async ownedTenant(usd = 50) {
      const tenant = await world().fundedTenant(usd);
      const ownerEmail = await person('owner');
      const signed = await signIn(ownerEmail, tenant.token);
      expect(signed.status).toBe(200);
      return { root: tenant.token, owner: signed.body.token, ownerEmail, tenantId: tenant.tenantId };
    },
  };
}
