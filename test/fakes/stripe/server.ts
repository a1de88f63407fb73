import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonical, decodeForm, FormError, list, metadataOf, obj, str, unknownParam, type FormObject, type FormValue } from './form.ts';
import {
  Answer,
  DECLINES,
  FAKE_API_VERSION,
  cardError,
  customerWire,
  eventWire,
  invalidRequest,
  missingParam,
  noSuch,
  ok,
  paymentIntentWire,
  paymentMethodWire,
  sessionWire,
  stripeId,
  unknownParameter,
  unixNow,
  type Wire,
} from './objects.ts';

/**
 * A local stand-in for api.stripe.com v1, covering exactly what the Stripe payments adapter calls:
 * customers, Checkout Sessions (create, retrieve with `expand[]`), PaymentIntents (create-and-confirm
 * off session), PaymentMethods (retrieve, detach). Form-encoded bodies with bracketed keys, Bearer
 * auth, Stripe's error envelope and statuses (400/401/402/404), and its idempotency layer: a key
 * replays the saved answer for the same parameters and is refused for different ones.
 * The payer's side (paying or abandoning a hosted checkout) and webhook deliveries are test helpers.
 */

/** How an off-session charge on a card ends: the card is saved by paying a checkout with it. */
export type CardBehavior = 'succeeds' | 'declines' | 'requires_authentication';

export interface TestCard {
  brand: string;
  last4: string;
  behavior?: CardBehavior;
}

export interface RecordedRequest {
  method: string;
  /** e.g. "/v1/checkout/sessions/cs_test_abc". */
  path: string;
  /** Decoded query (GET) or form body (POST). */
  params: FormObject;
  headers: IncomingHttpHeaders;
  idempotencyKey: string | null;
  /** The status answered. */
  status: number | null;
  /** Answered from the idempotency store, not executed again. */
  replayed: boolean;
}

export interface FakeStripe {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  host: string;
  port: number;
  secretKey: string;
  webhookSecret: string;
  customers: Map<string, Wire>;
  sessions: Map<string, Wire>;
  paymentIntents: Map<string, Wire>;
  paymentMethods: Map<string, Wire>;
  /** Every PaymentIntent created through POST /v1/payment_intents, declined ones included (status tells). */
  charges: Wire[];
  requests: RecordedRequest[];
  requestsTo(method: string, path: string): RecordedRequest[];
  /** The next `count` requests (whose path starts with `path`, if given) answer `status` with an api_error, before anything runs. */
  failNext(count: number, status: number, path?: string): void;
  /** The payer pays the hosted page: the session is paid, its PaymentIntent succeeds, the card is saved on the customer. */
  completeSession(sessionId: string, card?: TestCard): Wire;
  /** The session's 24 hours ran out (or it was expired): no payment possible any more. */
  expireSession(sessionId: string): Wire;
  /** A webhook delivery as Stripe sends it: pretty-printed JSON and `Stripe-Signature: t=…,v1=…`. */
  signedEvent(type: string, object: Wire, options?: { timestamp?: number; secret?: string }): { body: string; header: string };
  close(): Promise<void>;
}

interface SessionExtras {
  /** payment_intent_data, applied to the PaymentIntent made when the payer pays. */
  setupFutureUsage: string | null;
  intentMetadata: Record<string, string>;
  description: string | null;
}

interface SavedAnswer {
  endpoint: string;
  fingerprint: string;
  answer: Answer;
  requestId: string;
}

interface Fault {
  remaining: number;
  status: number;
  path: string | null;
}

type Allowed = Record<string, true | Record<string, unknown>>;

const CUSTOMER_PARAMS: Allowed = { email: true, name: true, description: true, metadata: true, expand: true };
const SESSION_PARAMS: Allowed = {
  mode: true,
  line_items: { quantity: true, price_data: { currency: true, unit_amount: true, product_data: { name: true, description: true } } },
  customer: true,
  customer_email: true,
  client_reference_id: true,
  metadata: true,
  payment_intent_data: { setup_future_usage: true, metadata: true, description: true },
  payment_method_types: true,
  success_url: true,
  cancel_url: true,
  expand: true,
};
const INTENT_PARAMS: Allowed = {
  amount: true,
  currency: true,
  customer: true,
  payment_method: true,
  off_session: true,
  confirm: true,
  metadata: true,
  description: true,
  expand: true,
};

const UNUSABLE_METHOD =
  'The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment, shared with a connected account without Customer attachment, or was detached from a Customer. It may not be used again. To use a PaymentMethod multiple times, you must attach it to a Customer first.';

const clone = <T>(value: T): T => structuredClone(value);

const integer = (value: string | undefined, param: string): number | Answer | undefined => {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) return invalidRequest(`Invalid integer: ${value}`, { code: 'parameter_invalid_integer', param });
  return Number(value);
};

const isUrl = (value: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

const flag = (value: string | undefined): boolean => value === 'true' || value === 'one_off' || value === 'recurring';

export async function startFakeStripe(options: { secretKey?: string; webhookSecret?: string } = {}): Promise<FakeStripe> {
  const secretKey = options.secretKey ?? `sk_test_fake${randomBytes(12).toString('hex')}`;
  const webhookSecret = options.webhookSecret ?? `whsec_fake${randomBytes(16).toString('hex')}`;
  const customers = new Map<string, Wire>();
  const sessions = new Map<string, Wire>();
  const sessionExtras = new Map<string, SessionExtras>();
  const paymentIntents = new Map<string, Wire>();
  const paymentMethods = new Map<string, Wire>();
  const behaviors = new Map<string, CardBehavior>();
  /** Detached, or used once without a customer: Stripe refuses them for any later payment. */
  const unusable = new Set<string>();
  const charges: Wire[] = [];
  const requests: RecordedRequest[] = [];
  const idempotency = new Map<string, SavedAnswer>();
  const faults: Fault[] = [];

  // ---- endpoints ---------------------------------------------------------------------------------

  const createCustomer = (p: FormObject): Answer => {
    const unknown = unknownParam(p, CUSTOMER_PARAMS);
    if (unknown) return unknownParameter(unknown);
    const customer = customerWire(stripeId('cus_', 14), {
      email: str(p, 'email'),
      name: str(p, 'name'),
      description: str(p, 'description'),
      metadata: metadataOf(p),
    });
    customers.set(customer.id as string, customer);
    return ok(customer);
  };

  const createSession = (p: FormObject): Answer => {
    const unknown = unknownParam(p, SESSION_PARAMS);
    if (unknown) return unknownParameter(unknown);
    const mode = str(p, 'mode');
    if (!mode) return missingParam('mode');
    if (mode !== 'payment') return invalidRequest(`The fake supports mode=payment only, not "${mode}".`, { param: 'mode' });
    const items = list(p, 'line_items');
    if (!items?.length) return missingParam('line_items');
    let total = 0;
    let currency: string | null = null;
    for (const [i, item] of items.entries()) {
      const at = `line_items[${i}]`;
      if (typeof item !== 'object' || Array.isArray(item)) return invalidRequest(`Invalid object`, { param: at });
      const quantity = integer(str(item, 'quantity'), `${at}[quantity]`);
      if (quantity instanceof Answer) return quantity;
      if (quantity === undefined) return missingParam(`${at}[quantity]`);
      if (quantity < 1) return invalidRequest('This value must be greater than or equal to 1.', { param: `${at}[quantity]` });
      const price = obj(item, 'price_data');
      if (!price) return missingParam(`${at}[price_data]`);
      const itemCurrency = str(price, 'currency')?.toLowerCase();
      if (!itemCurrency) return missingParam(`${at}[price_data][currency]`);
      if (currency && itemCurrency !== currency) return invalidRequest('All line items must use the same currency.', { param: 'line_items' });
      currency = itemCurrency;
      const unit = integer(str(price, 'unit_amount'), `${at}[price_data][unit_amount]`);
      if (unit instanceof Answer) return unit;
      if (unit === undefined) return missingParam(`${at}[price_data][unit_amount]`);
      if (unit < 0) return invalidRequest('This value must be greater than or equal to 0.', { param: `${at}[price_data][unit_amount]` });
      const product = obj(price, 'product_data');
      if (!product || !str(product, 'name')) return missingParam(`${at}[price_data][product_data][name]`);
      total += unit * quantity;
    }
    if (currency === 'usd' && total < 50) {
      return invalidRequest("The Checkout Session's total amount due must add up to at least $0.50 usd", { param: 'line_items' });
    }
    const customer = str(p, 'customer') ?? null;
    if (customer !== null && !customers.has(customer)) return noSuch('customer', customer, 'customer', false);
    for (const param of ['success_url', 'cancel_url']) {
      const url = str(p, param);
      if (url !== undefined && !isUrl(url)) return invalidRequest('Not a valid URL', { code: 'url_invalid', param });
    }
    const intentData = obj(p, 'payment_intent_data') ?? {};
    const setupFutureUsage = str(intentData, 'setup_future_usage') ?? null;
    if (setupFutureUsage !== null && !['on_session', 'off_session'].includes(setupFutureUsage)) {
      return invalidRequest(`Invalid setup_future_usage: must be one of on_session or off_session`, { param: 'payment_intent_data[setup_future_usage]' });
    }
    const session = sessionWire({
      id: stripeId('cs_test_', 58),
      customer,
      currency: currency!,
      amountTotal: total,
      metadata: metadataOf(p),
      clientReferenceId: str(p, 'client_reference_id') ?? null,
      successUrl: str(p, 'success_url') ?? null,
      cancelUrl: str(p, 'cancel_url') ?? null,
    });
    sessions.set(session.id as string, session);
    sessionExtras.set(session.id as string, {
      setupFutureUsage,
      intentMetadata: metadataOf(intentData),
      description: str(intentData, 'description') ?? null,
    });
    return ok(session);
  };

  /** Create, and with `confirm=true` charge at once: succeeded, or a 402 card_error whose PaymentIntent stays behind. */
  const createIntent = (p: FormObject): Answer => {
    const unknown = unknownParam(p, INTENT_PARAMS);
    if (unknown) return unknownParameter(unknown);
    const amount = integer(str(p, 'amount'), 'amount');
    if (amount instanceof Answer) return amount;
    if (amount === undefined) return missingParam('amount');
    const currency = str(p, 'currency')?.toLowerCase();
    if (!currency) return missingParam('currency');
    if (currency === 'usd' && amount < 50) return invalidRequest('Amount must be at least $0.50 usd', { code: 'amount_too_small', param: 'amount' });
    const customer = str(p, 'customer') ?? null;
    if (customer !== null && !customers.has(customer)) return noSuch('customer', customer, 'customer', false);
    const methodId = str(p, 'payment_method') ?? null;
    const method = methodId === null ? null : paymentMethods.get(methodId);
    if (methodId !== null && !method) return noSuch('PaymentMethod', methodId, 'payment_method', false);
    const confirm = str(p, 'confirm') === 'true';
    if (flag(str(p, 'off_session')) && !confirm) {
      return invalidRequest('off_session can only be used when confirm=true.', { param: 'off_session' });
    }
    if (method && unusable.has(method.id as string)) return invalidRequest(UNUSABLE_METHOD, { param: 'payment_method' });
    if (method && method.customer !== null && method.customer !== customer) {
      return invalidRequest(`The provided PaymentMethod belongs to a different Customer (or none was given): ${method.customer}.`, { param: 'payment_method' });
    }
    if (confirm && !method) {
      return invalidRequest("You cannot confirm this PaymentIntent because it's missing a payment method.", { code: 'payment_intent_unexpected_state' });
    }

    const base = {
      id: stripeId('pi_3'),
      amount,
      currency,
      customer,
      metadata: metadataOf(p),
      description: str(p, 'description') ?? null,
      setupFutureUsage: null,
    };
    if (!confirm) {
      const intent = paymentIntentWire({ ...base, paymentMethod: methodId, status: method ? 'requires_confirmation' : 'requires_payment_method', latestCharge: null, lastPaymentError: null });
      paymentIntents.set(base.id, intent);
      charges.push(intent);
      return ok(intent);
    }
    const behavior = behaviors.get(methodId!) ?? 'succeeds';
    const charge = stripeId('ch_3');
    if (behavior === 'succeeds') {
      const intent = paymentIntentWire({ ...base, paymentMethod: methodId, status: 'succeeded', latestCharge: charge, lastPaymentError: null });
      paymentIntents.set(base.id, intent);
      charges.push(intent);
      return ok(intent);
    }
    // a failed confirmation detaches the method from the intent and records it in last_payment_error
    const error = cardError(DECLINES[behavior], charge, clone(method!));
    const intent = paymentIntentWire({ ...base, paymentMethod: null, status: 'requires_payment_method', latestCharge: charge, lastPaymentError: error });
    paymentIntents.set(base.id, intent);
    charges.push(intent);
    return new Answer(402, { error: { ...error, payment_intent: clone(intent), request_log_url: 'https://dashboard.stripe.com/test/logs' } });
  };

  const detachMethod = (id: string): Answer => {
    const method = paymentMethods.get(id);
    if (!method) return noSuch('PaymentMethod', id, 'payment_method', true);
    if (method.customer === null) {
      return invalidRequest('The payment method you provided is not attached to a customer so detachment is impossible.');
    }
    method.customer = null;
    unusable.add(id);
    return ok(method);
  };

  const route = (method: string, path: string, p: FormObject): Answer => {
    if (method === 'POST' && path === '/v1/customers') return createCustomer(p);
    if (method === 'POST' && path === '/v1/checkout/sessions') return createSession(p);
    if (method === 'POST' && path === '/v1/payment_intents') return createIntent(p);
    const session = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (method === 'GET' && session) {
      const found = sessions.get(decodeURIComponent(session[1]!));
      return found ? ok(found) : noSuch('checkout.session', decodeURIComponent(session[1]!), 'session', true);
    }
    const pm = /^\/v1\/payment_methods\/([^/]+)(\/detach)?$/.exec(path);
    if (pm) {
      const id = decodeURIComponent(pm[1]!);
      if (method === 'POST' && pm[2]) return detachMethod(id);
      if (method === 'GET' && !pm[2]) {
        const found = paymentMethods.get(id);
        return found ? ok(found) : noSuch('PaymentMethod', id, 'payment_method', true);
      }
    }
    return new Answer(404, {
      error: {
        message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
        type: 'invalid_request_error',
      },
    });
  };

  // ---- expand[] ----------------------------------------------------------------------------------

  const lookup = (id: string): Wire | undefined =>
    customers.get(id) ?? paymentIntents.get(id) ?? paymentMethods.get(id) ?? sessions.get(id);

  /** Replaces id strings along `path` by the objects they name; null stays null, as in Stripe. */
  const expandPath = (target: Wire, path: string[], full: string): string | null => {
    const [head, ...rest] = path;
    const value = target[head!];
    if (value === null) return null;
    if (typeof value === 'string') {
      const found = lookup(value);
      if (!found) return `This property cannot be expanded (${full}).`;
      target[head!] = clone(found);
    } else if (typeof value !== 'object') {
      return `This property cannot be expanded (${full}).`;
    }
    return rest.length ? expandPath(target[head!] as Wire, rest, full) : null;
  };

  const expanded = (answer: Answer, params: FormObject): Answer => {
    const paths = (list(params, 'expand') ?? []).filter((v: FormValue): v is string => typeof v === 'string');
    if (answer.status !== 200 || paths.length === 0) return answer;
    const body = clone(answer.body);
    for (const path of paths) {
      const problem = expandPath(body, path.split('.'), path);
      if (problem) return invalidRequest(problem, { param: 'expand' });
    }
    return new Answer(200, body, answer.saved);
  };

  // ---- HTTP --------------------------------------------------------------------------------------

  const authError = (header: string | undefined): Answer | null => {
    const [scheme = '', value = ''] = (header ?? '').split(/\s+/, 2);
    let key: string | null = null;
    if (scheme.toLowerCase() === 'bearer') key = value;
    if (scheme.toLowerCase() === 'basic') key = Buffer.from(value, 'base64').toString('utf8').replace(/:$/, '');
    if (key === secretKey) return null;
    const message = key
      ? `Invalid API Key provided: ${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`
      : "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.";
    return new Answer(401, { error: { message, type: 'invalid_request_error' } }, false);
  };

  const takeFault = (path: string): Fault | null => {
    const fault = faults.find((f) => f.remaining > 0 && (f.path === null || path.startsWith(f.path)));
    if (fault) fault.remaining -= 1;
    return fault ?? null;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    const record: RecordedRequest = { method, path: url.pathname, params: {}, headers: { ...req.headers }, idempotencyKey: key, status: null, replayed: false };
    requests.push(record);
    const requestId = stripeId('req_', 14);
    const send = (answer: Answer, extra: Record<string, string> = {}) => {
      record.status = answer.status;
      res.writeHead(answer.status, {
        'content-type': 'application/json',
        'request-id': requestId,
        'stripe-version': (req.headers['stripe-version'] as string | undefined) ?? FAKE_API_VERSION,
        ...(key ? { 'idempotency-key': key } : {}),
        ...extra,
      });
      res.end(JSON.stringify(answer.body, null, 2));
    };

    const fault = takeFault(url.pathname);
    if (fault) return send(new Answer(fault.status, { error: { message: 'An unknown error occurred (injected by the fake).', type: 'api_error' } }, false));
    const denied = authError(req.headers.authorization);
    if (denied) return send(denied);
    try {
      record.params = decodeForm(method === 'GET' ? url.search.slice(1) : Buffer.concat(chunks).toString('utf8'));
    } catch (error) {
      if (error instanceof FormError) return send(invalidRequest(error.message));
      throw error;
    }

    const endpoint = `${method} ${url.pathname}`;
    const fingerprint = canonical(record.params);
    if (method === 'POST' && key) {
      const saved = idempotency.get(key);
      if (saved && saved.endpoint !== endpoint) {
        return send(new Answer(400, { error: { message: `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${saved.endpoint}' vs '${endpoint}'). Try using a key other than '${key}' if you meant to execute a different request.`, type: 'idempotency_error' } }, false));
      }
      if (saved && saved.fingerprint !== fingerprint) {
        return send(new Answer(400, { error: { message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`, type: 'idempotency_error' } }, false));
      }
      if (saved) {
        record.replayed = true;
        return send(saved.answer, { 'idempotent-replayed': 'true', 'original-request': saved.requestId });
      }
    }
    const answer = expanded(route(method, url.pathname, record.params), record.params);
    if (method === 'POST' && key && answer.saved) idempotency.set(key, { endpoint, fingerprint, answer, requestId });
    send(answer);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error), type: 'api_error' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  // ---- the payer's side and webhook deliveries ----------------------------------------------------

  const openSession = (sessionId: string): Wire => {
    const session = sessions.get(sessionId);
    if (!session) throw new Error(`fake stripe: no checkout session ${sessionId}`);
    if (session.status !== 'open') throw new Error(`fake stripe: checkout session ${sessionId} is ${String(session.status)}, not open`);
    return session;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    secretKey,
    webhookSecret,
    customers,
    sessions,
    paymentIntents,
    paymentMethods,
    charges,
    requests,
    requestsTo: (method, path) => requests.filter((r) => r.method === method && r.path === path),
    failNext(count, status, path) {
      faults.push({ remaining: count, status, path: path ?? null });
    },
    completeSession(sessionId, card = { brand: 'visa', last4: '4242' }) {
      const session = openSession(sessionId);
      const extras = sessionExtras.get(sessionId)!;
      const customer = session.customer as string | null;
      // setup_future_usage with a customer saves the card on it; otherwise the card is spent by this payment
      const saved = extras.setupFutureUsage !== null && customer !== null;
      const method = paymentMethodWire(stripeId('pm_1'), card, saved ? customer : null);
      const methodId = method.id as string;
      paymentMethods.set(methodId, method);
      behaviors.set(methodId, card.behavior ?? 'succeeds');
      if (!saved) unusable.add(methodId);
      const intent = paymentIntentWire({
        id: stripeId('pi_3'),
        amount: session.amount_total as number,
        currency: session.currency as string,
        customer,
        paymentMethod: methodId,
        metadata: extras.intentMetadata,
        description: extras.description,
        setupFutureUsage: extras.setupFutureUsage,
        status: 'succeeded',
        latestCharge: stripeId('ch_3'),
        lastPaymentError: null,
      });
      paymentIntents.set(intent.id as string, intent);
      Object.assign(session, {
        payment_intent: intent.id,
        payment_status: 'paid',
        status: 'complete',
        url: null,
        customer_details: { address: null, email: 'payer@example.com', name: null, phone: null, tax_exempt: 'none', tax_ids: [] },
      });
      return clone(session);
    },
    expireSession(sessionId) {
      const session = openSession(sessionId);
      Object.assign(session, { status: 'expired', url: null });
      return clone(session);
    },
    signedEvent(type, object, opts = {}) {
      const timestamp = opts.timestamp ?? unixNow();
      const body = JSON.stringify(eventWire(type, clone(object), timestamp), null, 2);
      // Stripe's scheme: HMAC-SHA256 of "<t>.<raw body>" with the endpoint's signing secret, hex, as v1
      const signature = createHmac('sha256', opts.secret ?? webhookSecret).update(`${timestamp}.${body}`).digest('hex');
      return { body, header: `t=${timestamp},v1=${signature}` };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
