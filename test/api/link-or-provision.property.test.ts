import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Link-or-provision under any interleaving: batches of parallel sign-ins of a few identities,
 * each without a bearer or with the bearer of one of two tenants, never attach an identity to two
 * tenants, and every answer is the one the rules give for the link that stood when it was decided.
 */
const PASSWORD = 'Correct-Horse-Battery-9';
let api: TestApi;
let inbox: SmtpInbox;
beforeAll(async () => {
  inbox = await startSmtpInbox();
  api = await startApi({ auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } } });
});
afterAll(async () => {
  await api?.close();
  await inbox?.close();
});

let run = 0;
async function account(email: string) {
  await api.call('POST', '/v1/auth/sign-up', { body: { email, password: PASSWORD } });
  const mail = await inbox.next((m) => m.to.includes(email) && /confirmation/.test(m.subject));
  const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
  expect((await api.call('POST', '/v1/auth/confirm-email', { body: { email, code } })).status).toBe(200);
}

describe('link-or-provision', () => {
  it('never provisions two tenants for one identity, whatever signs in at once; a bearer links into its own tenant', async () => {
    const attempt = fc.record({ person: fc.nat({ max: 2 }), bearer: fc.constantFrom('none', 'a', 'b') });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(attempt, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }), async (batches) => {
        run++;
        const people = Array.from({ length: 3 }, (_, i) => `p${i}.r${run}.${Date.now().toString(36)}@example.com`);
        await Promise.all(people.map(account));
        const tenants = { a: await api.newTenant('a'), b: await api.newTenant('b') };
        const shared = new Set([tenants.a.tenantId, tenants.b.tenantId]);
        // a person may belong to several tenants (docs/decisions.md, "One tree of authority"): each has at most one
        // of their own, whichever of their sign-ins without a bearer made it
        const own = new Map<string, Set<string>>();
        for (const batch of batches) {
          const answers = await Promise.all(
            batch.map(({ person, bearer }) =>
              api.call('POST', '/v1/auth/sign-in', { body: { email: people[person], password: PASSWORD }, ...(bearer !== 'none' && { token: tenants[bearer].token }) }),
            ),
          );
          answers.forEach((answer, i) => {
            const { person, bearer } = batch[i]!;
            expect(answer.status, JSON.stringify(answer.body)).toBe(200);
            const tenant = answer.body.tenant_id as string;
            if (bearer !== 'none') expect(tenant).toBe(tenants[bearer].tenantId);
            else if (!shared.has(tenant)) own.set(people[person]!, new Set([...(own.get(people[person]!) ?? []), tenant]));
          });
          for (const made of own.values()) expect(made.size).toBe(1);
        }
      }),
      { numRuns: 12 },
    );
  }, 180_000);
});
