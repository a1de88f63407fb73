import type { AccountControl } from '../../core/billing/account-control.ts';
import type { BillingService } from '../../core/billing/billing-service.ts';
import type { BudgetService } from '../../core/billing/budgets/budget-service.ts';
import type { BudgetWatch } from '../../core/billing/budgets/budget-watch.ts';
import type { PaymentsService } from '../../core/billing/payments/payments-service.ts';
import type { CatalogService } from '../../core/catalog/catalog-service.ts';
import type { PeopleService } from '../../core/identity/people-service.ts';
import type { SignInService } from '../../core/identity/sign-in-service.ts';
import type { InvitationService } from '../../core/invitations/invitation-service.ts';
import type { MarketService } from '../../core/market/market-service.ts';
import type { PriceHistory } from '../../core/market/price-history.ts';
import type { MarketSummaryService } from '../../core/market/summary-service.ts';
import type { MeteringService } from '../../core/metering/metering-service.ts';
import type { RentalService } from '../../core/rentals/rental-service.ts';
import type { ReservationService } from '../../core/reservations/reservation-service.ts';
import type { SpotClaimService } from '../../core/spot/spot-claim-service.ts';
import type { SweepService } from '../../core/sweep/sweep-service.ts';
import type { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import type { VolumeService } from '../../core/volumes/volume-service.ts';
import type { DeliveryWorker } from '../../core/webhooks/delivery-worker.ts';
import type { WebhookService } from '../../core/webhooks/webhook-service.ts';

/**
 * The services the composition root resolves once (hosts/composition/control-plane.ts) and every host is built on;
 * a file of its own so the hosts' modules read it without importing the root that imports them.
 */
export interface ControlPlaneServices {
  tenancy: TenancyService;
  market: MarketService;
  marketSummary: MarketSummaryService;
  billing: BillingService;
  rentals: RentalService;
  accountControl: AccountControl;
  sweep: SweepService;
  payments: PaymentsService;
  signIn: SignInService;
  people: PeopleService;
  invitations: InvitationService;
  catalog: CatalogService;
  volumes: VolumeService;
  metering: MeteringService;
  reservations: ReservationService;
  webhooks: WebhookService;
  /** The outbox's delivery worker: `addObserver` watches its attempts (metrics). */
  webhookDeliveries: DeliveryWorker;
  spotClaims: SpotClaimService;
  priceHistory: PriceHistory;
  budgets: BudgetService;
  /** Stops and mails what budgets decide after the commits that charged; `idle()` waits for it (tests). */
  budgetWatch: BudgetWatch;
}
