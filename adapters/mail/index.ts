import type { Logger } from 'pino';
import type { Mailer } from '../../core/ports/mailer.ts';
import { LogMailer } from './log-mailer.ts';
import { SmtpMailer } from './smtp-mailer.ts';

export { LogMailer, LOGGED_MAIL_MESSAGE } from './log-mailer.ts';
export { SmtpMailer } from './smtp-mailer.ts';

export type Env = Record<string, string | undefined>;

export interface MailConfig {
  /** smtp://user:pass@host:587 or smtps://user:pass@host:465; unset: mail is written to the log instead. */
  smtpUrl?: string;
  /** The sender: an address, or a name and an address (`Name <addr@host>`). */
  from: string;
}

export const DEFAULT_MAIL_FROM = 'gpu-control-plane <no-reply@localhost>';

/** SMTP when a URL is given, else the log (so a local user can read a code). */
export function createMailer({ smtpUrl, from, logger }: MailConfig & { logger: Logger }): Mailer {
  return smtpUrl ? new SmtpMailer(smtpUrl, from) : new LogMailer(logger);
}

/** `addr@host` or `Name <addr@host>`, on one line (a line break would add a header of its own). */
const SENDER = /^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/;

/** The mail settings from SMTP_URL and MAIL_FROM; throws an Error naming the variable when one is wrong. */
export function fromEnv(env: Env): MailConfig {
  const smtpUrl = env.SMTP_URL?.trim() || undefined;
  if (smtpUrl) {
    let url: URL;
    try {
      url = new URL(smtpUrl);
    } catch {
      throw new Error('SMTP_URL: must be a URL like smtps://user:password@smtp.example.com:465 (percent-encode the password)');
    }
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
      throw new Error(`SMTP_URL: must start with smtp:// (STARTTLS) or smtps:// (TLS), got "${url.protocol}//"`);
    }
    if (!url.hostname) throw new Error('SMTP_URL: names no host; write smtps://user:password@smtp.example.com:465');
  }
  const from = env.MAIL_FROM?.trim() || DEFAULT_MAIL_FROM;
  if (!SENDER.test(from)) throw new Error(`MAIL_FROM: must be an address (no-reply@example.com) or a name and an address (Example <no-reply@example.com>), got "${from}"`);
  return { ...(smtpUrl && { smtpUrl }), from };
}
