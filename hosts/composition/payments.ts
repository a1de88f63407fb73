import { createManualPayments } from '../../adapters/payments/manual/index.ts';
import { createStripePayments } from '../../adapters/payments/stripe/index.ts';
import type { Payments } from '../../core/ports/payments.ts';
import type { PaymentsConfig } from './config.ts';

/** The card processor the configuration names: the embedded manual one, or Stripe. */
export function createPayments(config: PaymentsConfig, publicUrl: string): Payments {
  switch (config.kind) {
    case 'manual':
      return createManualPayments(publicUrl);
    case 'stripe': {
      // STRIPE_API_BASE points the SDK at another host (a local fake in tests), as the SDK's host/port/protocol
      const base = config.apiBase ? new URL(config.apiBase) : null;
      return createStripePayments({
        secretKey: config.secretKey,
        webhookSecret: config.webhookSecret,
        ...(base && {
          host: base.hostname,
          port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)),
          protocol: base.protocol === 'http:' ? ('http' as const) : ('https' as const),
        }),
      });
    }
  }
}
