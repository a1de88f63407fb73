import type { Logger } from 'pino';
import { createBuiltinIdentity, fromEnv as builtinFromEnv, type BuiltinDatabase, type BuiltinIdentity } from '../../adapters/identity/builtin/index.ts';
import { fromEnv as cognitoFromEnv, type CognitoIdentityConfig } from '../../adapters/identity/cognito/config.ts';
import { fromEnv as githubFromEnv, type GithubCodeHostConfig } from '../../adapters/identity/github/config.ts';
import { createMailer, DEFAULT_MAIL_FROM, fromEnv as mailFromEnv, type MailConfig } from '../../adapters/mail/index.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { CodeHost } from '../../core/ports/code-host.ts';
import type { Identity } from '../../core/ports/identity.ts';
import type { Mailer } from '../../core/ports/mailer.ts';

/** Sign-in settings: where mail goes, which identity provider, and the code host for device sign-in. */
export interface AuthConfig {
  /** SMTP_URL and MAIL_FROM; without an SMTP URL mail is written to the log. */
  mail?: MailConfig;
  /** Redirect URIs the built-in sign-in page may send codes to besides this origin and loopback (AUTH_REDIRECT_URIS). */
  redirectUris?: string[];
  /** Amazon Cognito replaces the built-in provider when set (COGNITO_*). */
  cognito?: CognitoIdentityConfig | null;
  /** GitHub's device flow (GITHUB_CLIENT_ID); without it the device routes answer 409. */
  github?: GithubCodeHostConfig | null;
}

/** The sign-in settings from the environment; each wrong value is added to `problems`, naming its variable. */
export function authFromEnv(env: Record<string, string | undefined>, problems: string[]): AuthConfig {
  const read = <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (error) {
      problems.push(`  ${(error as Error).message}`);
      return undefined;
    }
  };
  const mail = read(() => mailFromEnv(env));
  const builtin = read(() => builtinFromEnv(env));
  const cognito = read(() => cognitoFromEnv(env));
  const github = read(() => githubFromEnv(env));
  return {
    ...(mail && { mail }),
    ...(builtin && { redirectUris: builtin.redirectUris }),
    ...(cognito && { cognito }),
    ...(github && { github }),
  };
}

export interface SignInAdapters {
  identity: Identity;
  /** Mail from the control plane itself (the built-in provider's codes, notices to a tenant's people): SMTP or the log. */
  mailer: Mailer;
  /** The built-in provider, which also serves the hosted sign-in page; null when Cognito is in use. */
  builtin: BuiltinIdentity | null;
  codeHost: CodeHost | null;
}

/**
 * The identity provider (Cognito when configured, else the built-in one on our database) and the code host.
 * Cognito (the AWS SDK) and GitHub are loaded only when configured: a server that does not use them does
 * not hold them in memory.
 */
export async function createSignInAdapters(config: AuthConfig, runtime: { database: BuiltinDatabase; clock: Clock; logger: Logger; publicUrl: string }): Promise<SignInAdapters> {
  const codeHost = config.github ? (await import('../../adapters/identity/github/index.ts')).createGithubCodeHost(config.github) : null;
  const mailer = createMailer({ ...(config.mail ?? { from: DEFAULT_MAIL_FROM }), logger: runtime.logger });
  if (config.cognito) return { identity: (await import('../../adapters/identity/cognito/index.ts')).createCognitoIdentity(config.cognito), mailer, builtin: null, codeHost };
  const builtin = createBuiltinIdentity({
    database: runtime.database,
    clock: runtime.clock,
    mailer,
    publicUrl: runtime.publicUrl,
    redirectUris: config.redirectUris ?? [],
    onMailError: (error, mail) => runtime.logger.error({ err: error, to: mail.to, subject: mail.subject }, 'mail could not be sent'),
  });
  return { identity: builtin, mailer, builtin, codeHost };
}
