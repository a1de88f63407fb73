import type { Transporter } from 'nodemailer';
import type { Mail, Mailer } from '../../core/ports/mailer.ts';

/** Seconds an SMTP server may take to answer, so a dead relay fails a send instead of holding it for minutes. */
const CONNECTION_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/**
 * The transport settings an SMTP URL names: smtps:// is TLS from the first byte (port 465 by default),
 * smtp:// is plain and upgraded with STARTTLS when the server offers it (port 587 by default); the user and
 * password, percent-encoded in the URL, log in.
 */
export function smtpOptions(smtpUrl: string) {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const user = decodeURIComponent(url.username);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(user && { auth: { user, pass: decodeURIComponent(url.password) } }),
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: CONNECTION_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  };
}

/** Sends each message through the SMTP server of SMTP_URL, from MAIL_FROM; a refusal or an outage rejects. */
export class SmtpMailer implements Mailer {
  private readonly smtpUrl: string;
  private readonly from: string;
  /** Made at the first send: nodemailer (about 9 MB) is loaded only by a server that sends mail. */
  private transport: Promise<Transporter> | null = null;

  constructor(smtpUrl: string, from: string) {
    this.smtpUrl = smtpUrl;
    this.from = from;
  }

  async send(mail: Mail): Promise<void> {
    this.transport ??= import('nodemailer').then(({ createTransport }) => createTransport(smtpOptions(this.smtpUrl)));
    await (await this.transport).sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  close(): void {
    void this.transport?.then((transport) => transport.close());
  }
}
