import { ManualPayments } from './adapter.ts';

export { ManualPayments } from './adapter.ts';

/** `publicUrl`: where this server is reached, for the local checkout page's address. */
export const createManualPayments = (publicUrl: string): ManualPayments => new ManualPayments(publicUrl);
