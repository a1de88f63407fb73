import type { Mail, Mailer } from '../ports/mailer.ts';

/** Told when a mail handed over in the background could not be sent (the request was answered already). */
export type MailErrorReporter = (error: unknown, mail: { to: string; subject: string }) => void;

/**
 * Mail handed to the mailer without waiting: the request that sends it is answered now and a failure is reported,
 * never thrown. `idle()` waits for what was handed over so far (tests, a graceful stop).
 */
export class BackgroundMail {
  private readonly mailer: Mailer;
  private readonly onError: MailErrorReporter;
  private readonly sending = new Set<Promise<void>>();

  constructor(mailer: Mailer, onError: MailErrorReporter = () => {}) {
    this.mailer = mailer;
    this.onError = onError;
  }

  send(mail: Mail): void {
    const sending: Promise<void> = Promise.resolve()
      .then(() => this.mailer.send(mail))
      .catch((error: unknown) => {
        try {
          this.onError(error, { to: mail.to, subject: mail.subject });
        } catch {
          // a reporter that throws must not become an unhandled rejection
        }
      })
      .finally(() => this.sending.delete(sending));
    this.sending.add(sending);
  }

  async idle(): Promise<void> {
    while (this.sending.size > 0) await Promise.all([...this.sending]);
  }
}
