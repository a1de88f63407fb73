import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer, DEFAULT_MAIL_FROM, fromEnv, LogMailer, LOGGED_MAIL_MESSAGE, SmtpMailer } from '../../adapters/mail/index.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-inbox.ts';

/** A pino logger whose lines the test reads back as objects. */
const capturedLogger = () => {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
};

describe('mail over SMTP (a real local SMTP server)', () => {
  let inbox: SmtpInbox;
  beforeAll(async () => {
    // a password that needs percent-encoding in the URL
    inbox = await startSmtpInbox({ user: 'relay-user', pass: 'p@ss:w/rd %1' });
  });
  afterAll(async () => {
    await inbox?.close();
  });

  it('delivers the message with its sender, recipient, subject and text, logged in with the URL\'s credentials', async () => {
    const { logger, lines } = capturedLogger();
    const mailer = createMailer({ smtpUrl: inbox.url, from: 'Control Plane <no-reply@cp.example>', logger });
    expect(mailer).toBeInstanceOf(SmtpMailer);
    const text = 'Your confirmation code is 123456.\n\nIt is valid for 15 minutes.\nA long line: ' + 'x'.repeat(120);
    await mailer.send({ to: 'Person@example.com', subject: 'Your code — 123456', text });
    const mail = await inbox.next((m) => m.envelopeTo.includes('Person@example.com'));
    expect(mail).toMatchObject({
      envelopeFrom: 'no-reply@cp.example',
      from: 'Control Plane <no-reply@cp.example>',
      to: 'Person@example.com',
      subject: 'Your code — 123456',
      text,
      user: 'relay-user',
    });
    (mailer as SmtpMailer).close();
    expect(lines).toEqual([]);
  });

  it('rejects when the server refuses the login, and when no server answers', async () => {
    const wrong = new URL(inbox.url);
    wrong.password = 'wrong';
    const refused = new SmtpMailer(wrong.toString(), DEFAULT_MAIL_FROM);
    await expect(refused.send({ to: 'a@example.com', subject: 's', text: 't' })).rejects.toThrow(/auth|invalid/i);
    refused.close();

    const closed = await startSmtpInbox();
    const url = closed.url;
    await closed.close();
    const nobody = new SmtpMailer(url, DEFAULT_MAIL_FROM);
    await expect(nobody.send({ to: 'a@example.com', subject: 's', text: 't' })).rejects.toThrow();
    nobody.close();
  });

  it('sends without credentials to a server that asks none', async () => {
    const open = await startSmtpInbox();
    try {
      const mailer = createMailer({ smtpUrl: open.url, from: 'no-reply@cp.example', logger: pino({ level: 'silent' }) });
      await mailer.send({ to: 'b@example.com', subject: 'Hello', text: 'plain' });
      expect(await open.next((m) => m.to === 'b@example.com')).toMatchObject({ subject: 'Hello', text: 'plain', user: null, from: 'no-reply@cp.example' });
    } finally {
      await open.close();
    }
  });
});

describe('mail without SMTP_URL', () => {
  it('writes the whole message to the log at info level, so a local user can read the code', async () => {
    const { logger, lines } = capturedLogger();
    const mailer = createMailer({ from: DEFAULT_MAIL_FROM, logger });
    expect(mailer).toBeInstanceOf(LogMailer);
    await mailer.send({ to: 'c@example.com', subject: 'Your code', text: 'Your confirmation code is 654321.' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: LOGGED_MAIL_MESSAGE,
      mail: { to: 'c@example.com', subject: 'Your code', text: 'Your confirmation code is 654321.' },
    });
    expect(LOGGED_MAIL_MESSAGE).toBe('mail not sent: no SMTP_URL; written here so a local user can read it');
  });

  it('is silent below info, like any other info line', async () => {
    const quiet = capturedLogger();
    await new LogMailer(quiet.logger.child({}, { level: 'warn' })).send({ to: 'd@example.com', subject: 's', text: 't' });
    expect(quiet.lines).toEqual([]);
  });
});

describe('mail settings from the environment', () => {
  it('defaults the sender and leaves SMTP off', () => {
    expect(fromEnv({})).toEqual({ from: DEFAULT_MAIL_FROM });
    expect(fromEnv({ SMTP_URL: '', MAIL_FROM: '' })).toEqual({ from: DEFAULT_MAIL_FROM });
    expect(DEFAULT_MAIL_FROM).toBe('gpu-control-plane <no-reply@localhost>');
  });

  it('reads smtp:// and smtps:// URLs and a sender with or without a name', () => {
    expect(fromEnv({ SMTP_URL: 'smtps://u:p%40ss@smtp.example.com:465', MAIL_FROM: 'no-reply@example.com' })).toEqual({
      smtpUrl: 'smtps://u:p%40ss@smtp.example.com:465',
      from: 'no-reply@example.com',
    });
    expect(fromEnv({ SMTP_URL: 'smtp://relay.internal', MAIL_FROM: 'GPU Cloud <hello@gpu.example>' })).toMatchObject({ from: 'GPU Cloud <hello@gpu.example>' });
  });

  it('names the variable of a wrong value, never echoing the SMTP password', () => {
    expect(() => fromEnv({ SMTP_URL: 'https://user:hunter2@smtp.example.com' })).toThrow(/^SMTP_URL: .*smtp:\/\//);
    expect(() => fromEnv({ SMTP_URL: 'https://user:hunter2@smtp.example.com' })).not.toThrow(/hunter2/);
    expect(() => fromEnv({ SMTP_URL: 'not a url hunter2' })).toThrow(/^SMTP_URL: /);
    expect(() => fromEnv({ SMTP_URL: 'not a url hunter2' })).not.toThrow(/hunter2/);
    expect(() => fromEnv({ MAIL_FROM: 'nobody' })).toThrow(/^MAIL_FROM: /);
    expect(() => fromEnv({ MAIL_FROM: 'a@b.example\r\nBcc: x@y.example' })).toThrow(/^MAIL_FROM: /);
    expect(() => fromEnv({ MAIL_FROM: 'Name <not-an-address>' })).toThrow(/^MAIL_FROM: /);
  });
});
