import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { newCode } from '../../adapters/identity/builtin/codes.ts';
import { createBuiltinIdentity, type BuiltinIdentity } from '../../adapters/identity/builtin/index.ts';
import { hashSecret, matchesHash } from '../../adapters/identity/builtin/passwords.ts';
import { verifierMatches } from '../../adapters/identity/builtin/tokens.ts';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import { DomainError } from '../../core/errors.ts';
import { pkcePair } from '../contract/identity-contract.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { codeIn, isConfirmationMail, MailOutbox } from '../support/mail-outbox.ts';

/** Each run hashes with argon2id (about 10-40 ms): fewer runs than fast-check's default 100. */
const RUNS = { numRuns: 40 };

/** A string that differs from `right`: edits of it (one character, case, padding, a prefix) and arbitrary text. */
const wrongFor = (right: string) =>
  fc
    .oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'grapheme', maxLength: 40 }),
      fc.constantFrom(right.toUpperCase(), right.toLowerCase(), ` ${right}`, `${right} `, right.slice(0, -1), `${right}0`, right.normalize('NFD')),
      fc.nat({ max: Math.max(0, right.length - 1) }).chain((at) =>
        fc.string({ minLength: 1, maxLength: 1 }).map((c) => right.slice(0, at) + c + right.slice(at + 1)),
      ),
    )
    .filter((candidate) => candidate !== right);

describe('the checks never accept a wrong value', () => {
  it('a one-time code: only its own 6 digits match its hash', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 0, maxLength: 12 }), fc.nat(999_999), async (guess, digits) => {
        const { code, hash } = await newCode();
        expect(await matchesHash(hash, code)).toBe(true);
        const wrongDigits = String((Number(code) + 1 + (digits % 999_999)) % 1_000_000).padStart(6, '0');
        expect(await matchesHash(hash, wrongDigits)).toBe(false);
        if (guess !== code) expect(await matchesHash(hash, guess)).toBe(false);
      }),
      RUNS,
    );
  });

  it('a password: only the very same string matches its hash', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 10, maxLength: 64 }).chain((right) => fc.tuple(fc.constant(right), wrongFor(right))),
        async ([right, wrong]) => {
          const hash = await hashSecret(right);
          expect(await matchesHash(hash, wrong)).toBe(false);
          expect(await matchesHash(hash, right)).toBe(true);
        },
      ),
      RUNS,
    );
  });

  it('a PKCE verifier: only the one whose S256 challenge was bound', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (guess) => {
        const { verifier, challenge } = pkcePair();
        expect(verifierMatches(verifier, challenge)).toBe(true);
        if (guess !== verifier) expect(verifierMatches(guess, challenge)).toBe(false);
        expect(verifierMatches(challenge, challenge)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('a malformed stored hash matches nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.string(), async (stored, candidate) => {
        if (!stored.startsWith('$argon2')) expect(await matchesHash(stored, candidate)).toBe(false);
      }),
    );
  });
});

describe('through the provider, on its database', () => {
  let database: TestDatabase;
  let storage: MikroStorage;
  let identity: BuiltinIdentity;
  const outbox = new MailOutbox();
  let serial = 0;

  beforeAll(async () => {
    database = await freshDatabase();
    storage = await MikroStorage.open(database.target);
    identity = createBuiltinIdentity({ database: storage, clock: new ManualClock(new Date()), mailer: outbox, publicUrl: 'http://localhost:8080' });
  });
  afterAll(async () => {
    await identity?.idle();
    await storage?.close();
    await database?.drop();
  });

  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).code;
  };

  it('confirm-email never accepts a wrong code, whatever the guesses; the right one still works after up to 4', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fc.stringMatching(/^\d{6}$/), fc.string({ maxLength: 8 })), { minLength: 1, maxLength: 4 }), async (guesses) => {
        const email = `prop-code-${process.pid}-${++serial}@example.com`;
        await identity.signUp(email, 'Correct-Horse-42');
        const code = codeIn(await outbox.next(email, 'confirm', isConfirmationMail));
        for (const guess of guesses.filter((g) => g !== code)) expect(await refusal(identity.confirmEmail(email, guess))).toBe('INVALID_INPUT');
        expect(await refusal(identity.signIn(email, 'Correct-Horse-42'))).toBe('CONFLICT');
        await identity.confirmEmail(email, code);
      }),
      { numRuns: 15 },
    );
  });

  it('sign-in never accepts a wrong password', async () => {
    const email = `prop-pw-${process.pid}@example.com`;
    const right = 'Correct-Horse-42';
    await identity.signUp(email, right);
    await identity.confirmEmail(email, codeIn(await outbox.next(email, 'confirm', isConfirmationMail)));
    await fc.assert(
      fc.asyncProperty(wrongFor(right), async (wrong) => {
        expect(await refusal(identity.signIn(email, wrong))).toBe('INVALID_CREDENTIALS');
      }),
      { numRuns: 30 },
    );
    expect((await identity.signIn(email, right)).kind).toBe('signed_in');
  });
});
