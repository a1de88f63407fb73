import { ManualClock } from '../../../adapters/clock/manual-clock.ts';
import { createBuiltinIdentity } from '../../../adapters/identity/builtin/index.ts';
import { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import { freshPglite, freshPostgres, postgresReachable, type TestDatabase } from '../../support/database.ts';
import { codeIn, isConfirmationMail, isResetMail, MailOutbox, temporaryPasswordIn } from '../../support/mail-outbox.ts';
import { identityContract, type IdentityHarness } from '../identity-contract.ts';

const PUBLIC_URL = 'http://cp.test:8080';

/** The built-in provider as a control plane builds it: people in its database, mail through a Mailer. */
const openBuiltin = (database: () => Promise<TestDatabase>) => async (): Promise<IdentityHarness> => {
  const db = await database();
  const storage = await MikroStorage.open(db.target);
  const outbox = new MailOutbox();
  const mailErrors: unknown[] = [];
  const identity = createBuiltinIdentity({
    database: storage,
    clock: new ManualClock(new Date()),
    mailer: outbox,
    publicUrl: PUBLIC_URL,
    onMailError: (error) => mailErrors.push(error),
  });
  return {
    identity,
    codeFor: async (email, purpose) => codeIn(await outbox.next(email, purpose, purpose === 'confirm' ? isConfirmationMail : isResetMail)),
    async temporaryPasswordFor(email) {
      await identity.idle(); // the latest invitation, not one mailed earlier
      const invitation = outbox.to(email).findLast((mail) => temporaryPasswordIn(mail) !== null);
      if (!invitation) throw new Error(`no invitation mailed to ${email}`);
      return temporaryPasswordIn(invitation)!;
    },
    // the hosted page's two steps, as authorize-routes.ts takes them (its HTTP side: test/api/authorize-page.test.ts)
    async authorizationCodeFor(email, password, { redirectUri, codeChallenge }) {
      const outcome = await identity.signIn(email, password);
      if (outcome.kind !== 'signed_in') throw new Error(`sign-in answered ${outcome.kind}`);
      return identity.issueAuthorizationCode(outcome.identity, { redirectUri, codeChallenge, state: null });
    },
    async close() {
      await identity.idle();
      await storage.close();
      await db.drop();
      if (mailErrors.length > 0) throw new Error(`mail failed: ${String(mailErrors[0])}`);
    },
  };
};

if (await postgresReachable()) identityContract('builtin', openBuiltin(freshPostgres));
identityContract('builtin', openBuiltin(async () => freshPglite()));
