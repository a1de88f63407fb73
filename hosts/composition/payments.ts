import { createManualPayments, type ManualDatabase } from '../../adapters/payments/manual/index.ts';
import type { Payments } from '../../core/ports/payments.ts';
import { ConfigError, type PaymentsConfig } from './config.ts';
import { unpaidRealCloudsMessage } from './unpaid-real-clouds.ts';

/** The processor a control plane runs with: the one configured, else the embedded one, which a real cloud refuses unasked. */
export function choosePayments(config: PaymentsConfig | undefined, realClouds: readonly string[]): PaymentsConfig {
  if (config) return config;
  if (realClouds.length > 0) throw new ConfigError(unpaidRealCloudsMessage(realClouds, 'embedding'));
  return { kind: 'manual' };
}

/**
 * The card processor the configuration names: the embedded manual one (its checkouts kept in `database`,
 * the control plane's), or Stripe (its SDK loaded only then).
 */
export async function createPayments(config: PaymentsConfig, publicUrl: string, database: ManualDatabase): Promise<Payments> {
  switch (config.kind) {
    case 'manual':
      return createManualPayments(publicUrl, database);
    case 'stripe': {
      const { createStripePayments } = await import('../../adapters/payments/stripe/index.ts');
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
