import { expect } from 'vitest';
import type { ApiResponse } from './api.ts';
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
