import type { Logger } from 'pino';
import type { Mail, Mailer } from '../../core/ports/mailer.ts';

export const LOGGED_MAIL_MESSAGE = 'mail not sent: no SMTP_URL; written here so a local user can read it';

/**
 * The mailer of a server without SMTP: each message is written whole (to, subject, text) to the log at info
 * level, so a person trying the control plane locally can read their code there. It never fails.
 */
export class LogMailer implements Mailer {
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  async send(mail: Mail): Promise<void> {
    this.logger.info({ mail: { to: mail.to, subject: mail.subject, text: mail.text } }, LOGGED_MAIL_MESSAGE);
  }
}
