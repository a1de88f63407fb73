import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meteringFromEnv, METERED_PRICES_EXAMPLE } from '../../hosts/composition/metering-config.ts';
import { EXAMPLE_TIME } from '../../hosts/http/schemas/common.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

/**
 * The examples of /openapi.json are what a contract-test generator sends: each operation's example body and
 * parameters, sent as they stand to a server with the configuration the docs show (an operator key,
 * METERED_PRICES' example; webhook names resolve to a public address; mail reaches a local inbox), are
 * accepted. Only the ids, times and one-time codes are replaced, by real ones made here. An operation added to
 * the route table is sent too, and one whose body has no example fails. Deletions go last: they remove what
 * the others name.
 */

type Json = any;

let api: TestApi;
let inbox: SmtpInbox;
let doc: Json;
let token: string;
/** Real ids by their prefix (ten, tok, ins...), and the other values an example names. */
const real: Record<string, string> = {};

const EXAMPLE_ID = /^([a-z]+)_9q4m2xk7c3rwh8vt$/;

beforeAll(async () => {
  const problems: string[] = [];
  inbox = await startSmtpInbox();
  api = await startApi(
    {
      metering: meteringFromEnv({ METERED_PRICES: METERED_PRICES_EXAMPLE }, problems),
      secretsKey: randomBytes(32),
      auth: { mail: { smtpUrl: inbox.url, from: 'gpu-control-plane <no-reply@cp.test>' } },
    },
    // the examples' webhook host, hooks.example.com, resolves to a public address (this machine has no DNS)
    { webhookResolver: async () => [{ address: '93.184.216.34', family: 4 }] },
  );
  expect(problems).toEqual([]);
  doc = (await api.call('GET', '/openapi.json')).body;
  const tenant = await api.newTenant();
  token = tenant.token;
  const as = { token };
  const operator = { headers: { 'x-service-operator-key': OPERATOR_KEY } };
  const ok = (answer: { status: number; body: Json }) => {
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    return answer.body;
  };
  ok(await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { ...operator, body: { amount_usd: '1000.00', reason: 'examples' } }));
  const nodes = ok(await api.call('GET', '/v1/gpus?limit=50', as)).nodes;
  const node = nodes.find((n: Json) => n.price_verified && n.region === 'us-east') ?? nodes[0];
  const sshKey = ok(await api.call('POST', '/v1/ssh-keys', { ...as, body: { name: 'examples', public_key: sshKeygen('ed25519').publicLine } }));
  const image = ok(await api.call('POST', '/v1/images', { ...as, body: { name: 'examples', image: 'ubuntu:24.04' } }));
  const template = ok(await api.call('POST', '/v1/templates', { ...as, body: { name: 'examples', image_id: image.id } }));
  const volume = ok(await api.call('POST', '/v1/volumes', { ...as, body: { name: 'examples', size_gb: 10, provider: 'sandbox', region: node.region } }));
  const instance = ok(await api.call('POST', '/v1/instances', { ...as, body: { node_id: node.id, termination_hours: 2 } }));
  const deposit = ok(await api.call('POST', '/v1/billing/deposits', { ...as, body: { amount_usd: 5 } }));
  const checkout = ok(await api.call('POST', '/v1/billing/checkout', { ...as, body: { amount_usd: 5 } }));
  const reservation = ok(await api.call('POST', '/v1/reservations', { ...as, body: { name: 'examples', node_id: nodes[1].id, starts_at: later(), hours: 2 } }));
  const claim = ok(await api.call('POST', '/v1/spot-claims', { ...as, body: { name: 'examples', search: {}, max_price_per_gpu_hour: '1.00', gpu_count: 1, hours: 1 } }));
  const endpoint = ok(await api.call('POST', '/v1/webhook-endpoints', { ...as, body: { url: 'https://hooks.example.com/setup' } }));
  const child = ok(await api.call('POST', '/v1/tokens', { ...as, body: { name: 'child' } }));
  // the examples' person signs up here: their code is mailed, and the example confirming it is sent with it
  ok(await api.call('POST', '/v1/auth/sign-up', { body: { email: EMAIL, password: 'a long passphrase' } }));
  // a hosted-page sign-in of someone else, with the PKCE challenge of the examples: its code is the exchange example's
  const pkce = 'pkce@example.com';
  ok(await api.call('POST', '/v1/auth/sign-up', { body: { email: pkce, password: 'a long passphrase' } }));
  ok(await api.call('POST', '/v1/auth/confirm-email', { body: { email: pkce, code: codeOf(await mailTo(pkce, /confirmation/)) } }));
  // a person linked into the tenant by its root token: the identity the people examples name
  const member = 'member@example.com';
  ok(await api.call('POST', '/v1/auth/sign-up', { body: { email: member, password: 'a long passphrase' } }));
  ok(await api.call('POST', '/v1/auth/confirm-email', { body: { email: member, code: codeOf(await mailTo(member, /confirmation/)) } }));
  ok(await api.call('POST', '/v1/auth/sign-in', { ...as, body: { email: member, password: 'a long passphrase' } }));
  const [person] = ok(await api.call('GET', '/v1/identities', as));
  const invitation = ok(await api.call('POST', '/v1/invitations', { ...as, body: { email: 'invitee@example.com', role: 'viewer' } }));
  const authorize = await fetch(`${api.baseUrl}/auth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...parameterExamples('/auth/authorize', 'get'), step: 'sign_in', email: pkce, password: 'a long passphrase' }).toString(),
    redirect: 'manual',
  });
  expect(authorize.status).toBe(303);
  authorizationCode = new URL(authorize.headers.get('location')!).searchParams.get('code')!;
  Object.assign(real, {
    ten: tenant.tenantId,
    tok: child.id,
    key: sshKey.id,
    img: image.id,
    tpl: template.id,
    vol: volume.id,
    ins: instance.id,
    dep: deposit.id,
    res: reservation.id,
    spc: claim.id,
    whe: endpoint.id,
    idn: person.id,
    inv: invitation.id,
    session_id: checkout.session_id,
    node_id: node.id,
  });
}, 60_000);
afterAll(async () => {
  await api?.close();
  await inbox?.close();
});

const EMAIL = 'me@example.com';
let authorizationCode: string;
const mailTo = (to: string, subject: RegExp) => inbox.next((m: ReceivedMail) => m.to.includes(to) && subject.test(m.subject) && !used.has(m), 10_000);
const used = new Set<ReceivedMail>();
const codeOf = (mail: ReceivedMail) => {
  used.add(mail);
  return /\b(\d{6})\b/.exec(mail.text)![1]!;
};

/** An operation's parameters as its examples give them (the authorize page's OAuth fields). */
const parameterExamples = (path: string, method: string): Record<string, string> =>
  Object.fromEntries((doc.paths[path][method].parameters ?? []).map((p: Json) => [p.name, String(p.example)]));

/** Mails the examples' person is owed so far, by kind: each sign-up or resend mails a code, each forgotten password one. */
const owed = { confirmation: 1, reset: 0 };
const MAILING: Record<string, keyof typeof owed> = { '/v1/auth/sign-up': 'confirmation', '/v1/auth/resend-code': 'confirmation', '/v1/auth/forgot-password': 'reset' };

/** The last code mailed to the examples' person of a kind, once every one owed has arrived (each new one replaces the last). */
async function lastCode(kind: keyof typeof owed): Promise<string> {
  const subject = kind === 'confirmation' ? /confirmation/ : /reset/i;
  const mails = () => inbox.received.filter((m) => m.to.includes(EMAIL) && subject.test(m.subject));
  for (let i = 0; i < 200 && mails().length < owed[kind]; i++) await new Promise((wait) => setTimeout(wait, 25));
  return /\b(\d{6})\b/.exec(mails().at(-1)!.text)![1]!;
}

/** The one-time code an example stands for, when the operation is sent: the last one mailed for it, or the hosted page's. */
async function realCode(path: string): Promise<string | undefined> {
  if (path === '/v1/auth/confirm-email') return lastCode('confirmation');
  if (path === '/v1/auth/reset-password') return lastCode('reset');
  if (path === '/v1/auth/idp/exchange') return authorizationCode;
  return undefined;
}

/** A time the server takes for any example: two hours ahead of its clock (reservations want 5 minutes to 90 days). */
const later = () => new Date(api.clock.now().getTime() + 2 * 3_600_000).toISOString();

/** The example with its ids and times replaced by real ones; a field or parameter named by `name` may be swapped as a whole. */
function substitute(value: Json, name?: string): Json {
  if (Array.isArray(value)) return value.map((item) => substitute(item));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, substitute(inner, key)]));
  if (typeof value !== 'string') return value;
  if (name && name in real) return real[name];
  const id = EXAMPLE_ID.exec(value);
  if (id) {
    expect(real, `an example names a ${id[1]}_ id that this test makes none of: add one to its world`).toHaveProperty(id[1]!);
    return real[id[1]!];
  }
  if (value === EXAMPLE_TIME) return later();
  return value;
}

interface Sent {
  operation: string;
  status: number;
  detail: unknown;
}

/** Each operation's request as its examples make it: path and query parameters that have one, and the body's. */
function exampleRequest(path: string, op: Json): { url: string; body: Json; hasBody: boolean; missing: string[] } {
  const missing: string[] = [];
  let url = path;
  const query = new URLSearchParams();
  for (const parameter of op.parameters ?? []) {
    const example = parameter.example ?? parameter.schema?.examples?.[0];
    if (example === undefined) {
      if (parameter.required) missing.push(`${parameter.in} parameter ${parameter.name}`);
      continue;
    }
    const value = String(substitute(example, parameter.name));
    if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(value));
    else if (parameter.in === 'query') query.set(parameter.name, value);
  }
  const media = op.requestBody?.content?.['application/json'];
  if (media && media.example === undefined) missing.push('request body example');
  const search = query.toString();
  return { url: search ? `${url}?${search}` : url, body: media ? substitute(media.example) : undefined, hasBody: Boolean(media), missing };
}

describe("the document's examples", () => {
  it('give every request body an example, and every parameter with rules (pattern, enum, bounds, format)', () => {
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const ruled = (schema: Json) => JSON.stringify(schema ?? {}).match(/"(pattern|enum|minimum|maximum|exclusiveMinimum|format|type":"boolean)"/);
        for (const parameter of op.parameters ?? []) {
          if (ruled(parameter.schema) && parameter.example === undefined) missing.push(`${method.toUpperCase()} ${path} ${parameter.in} ${parameter.name}`);
        }
        if (op.requestBody && op.requestBody.content['application/json'].example === undefined) missing.push(`${method.toUpperCase()} ${path} body`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('are accepted as they stand: no operation answers 422 (nor 400, 415 or 500) to its own example', async () => {
    const sent: Sent[] = [];
    const refused: Sent[] = [];
    const operator = { 'x-service-operator-key': OPERATOR_KEY };
    const all = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, op]) => ({ path, method, op })),
    );
    const ordered = [...all.filter((o) => o.method !== 'delete'), ...all.filter((o) => o.method === 'delete')];
    {
      for (const { path, method, op } of ordered) {
        const request = exampleRequest(path, op);
        const code = await realCode(path);
        if (code !== undefined) request.body = { ...request.body, code };
        expect(request.missing, `${method.toUpperCase()} ${path}`).toEqual([]);
        const scheme = Object.keys(op.security?.[0] ?? {})[0];
        const answer = await api.call(method.toUpperCase(), request.url, {
          ...(scheme === 'bearerAuth' && { token }),
          ...(scheme === 'operatorKey' && { headers: operator }),
          ...(request.hasBody && { body: request.body }),
        });
        if (path in MAILING && request.body?.email === EMAIL && answer.status < 300) owed[MAILING[path]!]++;
        const outcome = { operation: `${method.toUpperCase()} ${request.url}`, status: answer.status, detail: answer.body?.detail ?? answer.body?.errors };
        sent.push(outcome);
        // 400 is a malformed request: refused unless the document states no body for it (the hosted page's form, read by its handler)
        if ([415, 422].includes(answer.status) || answer.status >= 500 || (answer.status === 400 && request.hasBody)) refused.push(outcome);
      }
    }
    expect(refused).toEqual([]);
    // they reached past validation: most of them succeeded outright
    expect(sent.filter((s) => s.status < 300).length).toBeGreaterThan(sent.length / 2);
  }, 120_000);
});
