import Stripe from 'stripe';
import type { Payments } from '../../../core/ports/payments.ts';
import { StripePayments } from './adapter.ts';

export interface StripePaymentsConfig {
  /** sk_live_… / sk_test_… (or a restricted rk_… key allowed customers, checkout sessions, payment intents, payment methods). */
  secretKey: string;
  /** whsec_…: the signing secret of the webhook endpoint pointed at this server. */
  webhookSecret: string;
  /** Only to reach a local fake: default api.stripe.com:443 over https. */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
  /** Per request, default 30 000 ms (the SDK's own default is 80 s). */
  timeoutMs?: number;
  /** Extra attempts after a lost answer, 409 or 5xx, default 1; safe because every write carries an idempotency key. */
  maxNetworkRetries?: number;
}

export function createStripePayments(config: StripePaymentsConfig): Payments {
  if (!config.secretKey) throw new Error('stripe: secretKey is required');
  if (!config.webhookSecret) throw new Error('stripe: webhookSecret is required (whsec_…, from the webhook endpoint)');
  const stripe = new Stripe(config.secretKey, {
    maxNetworkRetries: config.maxNetworkRetries ?? 1,
    timeout: config.timeoutMs ?? 30_000,
    telemetry: false,
    ...(config.host !== undefined && { host: config.host }),
    ...(config.port !== undefined && { port: config.port }),
    ...(config.protocol !== undefined && { protocol: config.protocol }),
  });
  return new StripePayments(stripe, config.webhookSecret);
}
