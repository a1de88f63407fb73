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
