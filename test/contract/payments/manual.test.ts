import { describe, expect, it } from 'vitest';
import { ManualPayments } from '../../../adapters/payments/manual/adapter.ts';
import { createManualPayments } from '../../../adapters/payments/manual/index.ts';
import { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import { freshDatabase } from '../../support/database.ts';
import { paymentsContract } from '../payments-contract.ts';

const harnessOf = (payments: ManualPayments, close: () => Promise<void> = async () => {}) => ({
  payments,
  async pay(sessionId: string) {
    if (!(await payments.pay(sessionId))) throw new Error(`session ${sessionId} cannot be paid`);
  },
  async expire(sessionId: string) {
    await payments.expire(sessionId);
  },
  close,
});

/** As a control plane builds it: checkouts in its database. */
paymentsContract('manual', async () => {
  const database = await freshDatabase();
  const storage = await MikroStorage.open(database.target);
  return harnessOf(createManualPayments('http://127.0.0.1:1', storage), async () => {
    await storage.close();
    await database.drop();
  });
});

/** Standing alone (no database): checkouts in memory. */
paymentsContract('manual', async () => harnessOf(new ManualPayments('http://127.0.0.1:1')));

describe('manual processor on a database', () => {
  it('a second processor on the same database (a restart, another replica) pays a checkout the first opened, once', async () => {
    const database = await freshDatabase();
    const storage = await MikroStorage.open(database.target);
    try {
      const before = createManualPayments('http://127.0.0.1:1', storage);
      const created = await before.createCheckout({
        depositId: 'dep_restart1', tenantId: 'ten_restart', amountCents: 1_500, customerId: null,
        successUrl: 'https://cp.example/ok?session={CHECKOUT_SESSION_ID}', cancelUrl: 'https://cp.example/cancel',
      });
      const after = createManualPayments('http://127.0.0.1:1', storage);
      expect(await after.page(created.sessionId)).toMatchObject({ amountCents: 1_500, status: 'open', successUrl: `https://cp.example/ok?session=${created.sessionId}` });
      expect(await Promise.all([after.pay(created.sessionId), before.pay(created.sessionId)])).toEqual(expect.arrayContaining([true, false]));
      expect(await before.getCheckout(created.sessionId)).toMatchObject({ status: 'paid', depositId: 'dep_restart1', customerId: created.customerId, card: { brand: 'manual' } });
      expect(await after.expire(created.sessionId)).toBe(false);
    } finally {
      await storage.close();
      await database.drop();
    }
  });
});
