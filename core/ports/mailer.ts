/** One plain-text message to one person. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail: SMTP when configured, else the server log (so a local user can read a code). */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/**
 * How much may still be mailed to one address (docs/decisions.md, "Mail to one address"). `take` counts one
 * ask against the address's allowance and answers whether it may mail; false: mail nothing, answer as usual.
 */
export interface MailAllowance {
  take(to: string): Promise<boolean>;
}

/** No limit: for a provider tested on its own. */
export const UNLIMITED_MAIL: MailAllowance = { take: async () => true };
