import { createCognitoIdentity } from '../../../adapters/identity/cognito/index.ts';
import { startFakeCognito, type FakeCognito, type FakeCognitoOptions, type SentMessage } from '../../fakes/cognito/server.ts';
import { identityContract, type IdentityHarness } from '../identity-contract.ts';

/**
 * The person's side of a fake pool: Cognito mails codes and invitations itself, so they are read from
 * the fake's outbox, each code handed out once (the harness's promise), in the order it was sent.
 */
const harnessFor = (fake: FakeCognito): Omit<IdentityHarness, 'identity'> => {
  const handedOut = new Set<SentMessage>();
  const nextMessage = (email: string, kind: SentMessage['kind']): SentMessage => {
    const wanted = email.trim().toLowerCase();
    const message = fake.state.outbox.find((m) => m.kind === kind && m.to.toLowerCase() === wanted && !handedOut.has(m));
    if (!message) throw new Error(`no ${kind} message for ${email} that was not handed out already`);
    handedOut.add(message);
    return message;
  };
  return {
    // the fake sends before it answers: a code is there by the time the call returned
    codeFor: async (email, purpose) => nextMessage(email, purpose).code!,
    temporaryPasswordFor: async (email) => {
      const password = fake.state.temporaryPassword(email);
      if (!password) throw new Error(`no invitation for ${email}`);
      return password;
    },
    authorizationCodeFor: async (email, password, request) => fake.state.authorize(email, password, request.redirectUri, request.codeChallenge),
    close: () => fake.close(),
  };
};

const openCognito = (options: FakeCognitoOptions) => async (): Promise<IdentityHarness> => {
  const fake = await startFakeCognito(options);
  const identity = createCognitoIdentity({
    region: fake.state.region,
    userPoolId: fake.state.userPoolId,
    clientId: fake.state.clientId,
    ...(fake.state.clientSecret && { clientSecret: fake.state.clientSecret }),
    domain: fake.url,
    endpoint: fake.url,
    // the fake takes any SigV4 signature on AdminCreateUser
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'fake-secret' },
    timeoutMs: 5_000,
    maxAttempts: 1,
  });
  return { identity, ...harnessFor(fake) };
};

/** Cognito tells an unconfirmed account before it checks the password (the fake does as Cognito does). */
const COGNITO = { unconfirmedWhateverThePassword: true };

// a public app client in a pool that hides user existence (the console's default)
identityContract('cognito', openCognito({}), COGNITO);
// a confidential app client (SECRET_HASH on every call) in a LEGACY pool (UserNotFoundException shown)
identityContract('cognito', openCognito({ clientSecret: 'Zq4' + 'x'.repeat(48), preventUserExistenceErrors: false }), COGNITO);
