import type { Mail, Mailer } from '../../core/ports/mailer.ts';

/**
 * A mailer that keeps what it is given, for tests that read the mail a person would: codes are handed out
 * once each, in the order they were sent, waiting for one still on its way (mail leaves in the background).
 */
export class MailOutbox implements Mailer {
  readonly sent: Mail[] = [];
  /** Index in `sent` up to which each reader key has been handed out. */
  private readonly read = new Map<string, number>();
  private readonly waiting = new Set<() => void>();
  /** Set to make the next sends fail (an SMTP outage). */
  failing: Error | null = null;

  async send(mail: Mail): Promise<void> {
    if (this.failing) throw this.failing;
    this.sent.push(mail);
    for (const wake of this.waiting) wake();
  }

  /** The mails to `to` so far. */
  to(to: string): Mail[] {
    return this.sent.filter((mail) => mail.to === to.toLowerCase());
  }

  /**
   * The next mail to `to` that `matches` not yet handed out under `key`, waiting at most `timeoutMs` for it.
   */
  next(to: string, key: string, matches: (mail: Mail) => boolean, timeoutMs = 10_000): Promise<Mail> {
    const readerKey = `${to.toLowerCase()}\u0000${key}`;
    return new Promise((resolve, reject) => {
      const look = (): boolean => {
        const from = this.read.get(readerKey) ?? 0;
        for (let i = from; i < this.sent.length; i++) {
          const mail = this.sent[i]!;
          if (mail.to === to.toLowerCase() && matches(mail)) {
            this.read.set(readerKey, i + 1);
            cleanup();
            resolve(mail);
            return true;
          }
        }
        return false;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${key} mail to ${to} within ${timeoutMs} ms (sent to them: ${this.to(to).map((m) => `"${m.subject}"`).join(', ') || 'nothing'})`));
      }, timeoutMs);
      const wake = () => void look();
      const cleanup = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
      };
      this.waiting.add(wake);
      look();
    });
  }
}

/** The code in a mail of the built-in provider ("Your confirmation code is 123456."). */
export const codeIn = (mail: Mail): string => {
  const found = /code is (\d{6})\./.exec(mail.text);
  if (!found) throw new Error(`no code in mail "${mail.subject}"`);
  return found[1]!;
};

export const isConfirmationMail = (mail: Mail): boolean => /confirmation code/.test(mail.subject);
export const isResetMail = (mail: Mail): boolean => /password reset code/.test(mail.subject);
export const temporaryPasswordIn = (mail: Mail): string | null => /^Temporary password: (\S+)$/m.exec(mail.text)?.[1] ?? null;
