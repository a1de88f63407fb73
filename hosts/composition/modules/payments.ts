import { instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { PaymentsService } from '../../../core/billing/payments/payments-service.ts';
import type { Payments } from '../../../core/ports/payments.ts';
import type { ControlPlaneConfig } from '../config.ts';
import { basics, get, PAYMENTS } from './ports.ts';

/** Auto-recharge payments allowed in any rolling 24 hours (docs/decisions.md, "Payments"). */
const MAX_PAYMENTS_PER_24H = 3;

/** Money in: the card processor (Stripe or the embedded one) and checkouts, auto-recharge, deposits. */
export function registerPayments(container: DependencyContainer, parts: { config: ControlPlaneConfig; processor: Payments; publicUrl: string }): void {
  const { config } = parts;
  const returnUrl = config.checkoutReturnUrl ?? `${parts.publicUrl.replace(/\/+$/, '')}/`;
  container.register(PAYMENTS, { useValue: parts.processor });
  container.register(PaymentsService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new PaymentsService({
          ...basics(c),
          payments: get(c, PAYMENTS),
          settings: {
            maxPaymentsPer24h: config.billing?.maxPaymentsPer24h ?? MAX_PAYMENTS_PER_24H,
            successUrl: `${returnUrl}?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
            cancelUrl: `${returnUrl}?checkout=cancelled&session_id={CHECKOUT_SESSION_ID}`,
          },
        }),
    ),
  });
}
