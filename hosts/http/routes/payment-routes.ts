import { z } from 'zod';
import type { ManualPayments } from '../../../adapters/payments/manual/adapter.ts';
import type { PaymentsService } from '../../../core/billing/payments/payments-service.ts';
import { notFound } from '../../../core/errors.ts';
import { formatUsd } from '../../../core/money.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { SessionIdParams } from '../schemas/billing.ts';

const StripeEventIn = z
  .looseObject({ id: z.string(), type: z.string() })
  .meta({ id: 'StripeEvent', description: 'An event as Stripe sends it; only its signature (Stripe-Signature) makes it credible.' });

const LOCATION = z.string().meta({ description: 'Where the payer goes next.' });

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Stripe's webhook: no bearer, the signature over the raw body is the credential. */
export function stripeWebhookRoutes(payments: PaymentsService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/webhooks/stripe',
      operationId: 'stripeWebhook',
      summary: 'Stripe event deliveries (Stripe-Signature required); a completed checkout credits once',
      tags: ['payments'],
      access: { kind: 'public' },
      // read as JSON for the documentation and the common checks; the signature is verified over the raw bytes
      body: StripeEventIn,
      responses: [
        { status: 200, description: 'Received', schema: z.object({ received: z.literal(true), handled: z.string() }) },
        { status: 400, description: 'The signature is missing, wrong or too old' },
        { status: 503, description: 'Stripe could not be asked about the session; it delivers the event again' },
      ],
      async handle({ req }) {
        const raw = (req as { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
        const { handled } = await payments.webhook(raw, req.get('stripe-signature'));
        return { status: 200, body: { received: true, handled } };
      },
    }),
  ];
}

/** The embedded processor's checkout page: a button that pays with a pretend card. */
export function manualCheckoutRoutes(manual: ManualPayments, payments: PaymentsService): RouteDef[] {
  const page = async (sessionId: string) => {
    const found = await manual.page(sessionId);
    if (!found) throw notFound(`checkout session ${sessionId}`);
    return found;
  };
  return [
    defineRoute({
      method: 'get',
      path: '/v1/payments/manual/{session_id}',
      operationId: 'manualCheckoutPage',
      summary: 'The embedded processor\'s checkout page (HTML): pay with a pretend card, no money moves',
      tags: ['payments'],
      access: { kind: 'public' },
      params: SessionIdParams,
      responses: [{ status: 200, description: 'An HTML page', contentType: 'text/html', schema: z.string() }],
      async handle({ params }) {
        const { amountCents, status } = await page(params.session_id);
        const id = escape(params.session_id);
        const action =
          status === 'open'
            ? `<form method="post" action="${id}/pay"><button>Pay $${formatUsd(amountCents)}</button></form><form method="post" action="${id}/cancel"><button>Cancel</button></form>`
            : `<p>This checkout is ${status}.</p>`;
        return {
          status: 200,
          raw: { contentType: 'text/html', text: `<!doctype html><html><head><meta charset="utf-8"><title>Checkout</title></head><body><h1>Add $${formatUsd(amountCents)} to your balance</h1><p>Embedded test processor: no card is charged.</p>${action}</body></html>` },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/payments/manual/{session_id}/pay',
      operationId: 'manualCheckoutPay',
      summary: 'Pay the embedded checkout; the balance grows at once and the payer is sent back',
      tags: ['payments'],
      access: { kind: 'public' },
      params: SessionIdParams,
      bodyOptional: true,
      responses: [{ status: 303, description: 'Back to the success address', headers: { Location: LOCATION } }],
      async handle({ params }) {
        const { successUrl } = await page(params.session_id);
        await manual.pay(params.session_id);
        await payments.settleSession(params.session_id);
        return { status: 303, headers: { location: successUrl } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/payments/manual/{session_id}/cancel',
      operationId: 'manualCheckoutCancel',
      summary: 'Abandon the embedded checkout',
      tags: ['payments'],
      access: { kind: 'public' },
      params: SessionIdParams,
      bodyOptional: true,
      responses: [{ status: 303, description: 'Back to the cancel address', headers: { Location: LOCATION } }],
      async handle({ params }) {
        const { cancelUrl } = await page(params.session_id);
        await manual.expire(params.session_id);
        await payments.settleSession(params.session_id);
        return { status: 303, headers: { location: cancelUrl } };
      },
    }),
  ];
}
