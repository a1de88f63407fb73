import { createManualPayments } from '../../adapters/payments/manual/index.ts';
import type { Payments } from '../../core/ports/payments.ts';
import type { PaymentsConfig } from './config.ts';

/** The card processor the configuration names. Stripe is wired once its adapter lands (issue 5). */
export function createPayments(config: PaymentsConfig, publicUrl: string): Payments {
  switch (config.kind) {
    case 'manual':
      return createManualPayments(publicUrl);
    case 'stripe':
      throw new Error('the Stripe adapter is not built yet');
  }
}
