import { ManualPayments } from './adapter.ts';
import { SqlCheckoutStore, type ManualDatabase } from './sql-checkout-store.ts';

export { ManualPayments } from './adapter.ts';
export type { ManualDatabase } from './sql-checkout-store.ts';

/**
 * `publicUrl`: where this server is reached, for the local checkout page's address. `database`: the control
 * plane's, where checkouts are kept so an unpaid one can still be paid after a restart.
 */
export const createManualPayments = (publicUrl: string, database: ManualDatabase): ManualPayments =>
  new ManualPayments(publicUrl, new SqlCheckoutStore(database));
