import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as a real SMTP server received it: the envelope, and the headers and text decoded. */
export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  /** Header values by lower-case name, unfolded and decoded (the last one of a name wins). */
  headers: Map<string, string>;
  from: string;
  to: string;
  subject: string;
  text: string;
  /** Who logged in to send it (null: nobody). */
  user: string | null;
}

export interface SmtpInbox {
  /** smtp://user:pass@127.0.0.1:<port> (or without credentials), for SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  /** The first message (already here or still to come) that `matches`, waiting at most `timeoutMs`. */
  next(matches: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** RFC 2047 encoded words, as nodemailer writes a subject that is not plain ASCII. */
const decodeWords = (value: string): string =>
  value.replace(/=\?([^?]+)\?([bq])\?([^?]*)\?=\s*(?==\?)|=\?([^?]+)\?([bq])\?([^?]*)\?=/gi, (...m: string[]) => {
    const [encoding, text] = m[2] ? [m[2], m[3]!] : [m[5]!, m[6]!];
    if (encoding.toLowerCase() === 'b') return Buffer.from(text, 'base64').toString('utf8');
    return Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
  });

const decodeBody = (body: string, encoding: string | undefined): string => {
  switch (encoding?.toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
    default:
      return body;
  }
};

/** A single-part text message (what our mailer sends) split into decoded headers and text. */
export function parseMessage(raw: string): { headers: Map<string, string>; text: string } {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? '' : raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  const text = decodeBody(body, headers.get('content-transfer-encoding')).replace(/\r\n/g, '\n').replace(/\n$/, '');
  return { headers, text };
}

/**
 * A real SMTP server on a free loopback port that keeps what it receives. With `credentials` it requires that
 * login (over the plain connection: it is loopback), as a relay would.
 */
export async function startSmtpInbox(credentials?: { user: string; pass: string }): Promise<SmtpInbox> {
  const received: ReceivedMail[] = [];
  const waiting = new Set<() => void>();
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', ...(credentials ? [] : ['AUTH'])],
    authOptional: !credentials,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (credentials && auth.username === credentials.user && auth.password === credentials.pass) callback(null, { user: auth.username });
      else callback(new Error('invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const { headers, text } = parseMessage(Buffer.concat(chunks).toString('utf8'));
        received.push({
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
          headers,
          from: headers.get('from') ?? '',
          to: headers.get('to') ?? '',
          subject: headers.get('subject') ?? '',
          text,
          user: typeof session.user === 'string' ? session.user : null,
        });
        for (const wake of waiting) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const login = credentials ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@` : '';

  const next: SmtpInbox['next'] = (matches, timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      const look = (): boolean => {
        const found = received.find(matches);
        if (!found) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no matching mail within ${timeoutMs} ms (received ${received.length}: ${received.map((m) => `${m.to} "${m.subject}"`).join(', ')})`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiting.delete(wake);
      };
      const wake = () => void look();
      waiting.add(wake);
      look();
    });

  return {
    url: `smtp://${login}127.0.0.1:${port}`,
    received,
    next,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
