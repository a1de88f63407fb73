import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckoutCreated, Payments } from '../../core/ports/payments.ts';

/** A card as the payer types it; adapters that cannot choose one (the manual page) may ignore it. */
export interface TestCard {
  brand: string;
  last4: string;
}

/**
 * What a payments contract test needs: the adapter, and the payer's side of its checkout page, the
 * only steps that differ from one processor to the next.
 */
export interface PaymentsHarness {
  payments: Payments;
  /** The payer pays the checkout with a card, saved for later use. */
  pay(sessionId: string, card?: TestCard): Promise<void>;
  /** The checkout expires unpaid. */
  expire(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

const AMOUNT = 2_500;

/** The behaviour every Payments adapter must show, whatever processor sits behind it. */
export function paymentsContract(name: string, open: () => Promise<PaymentsHarness>): void {
  describe(`payments contract: ${name}`, () => {
    let harness: PaymentsHarness;
    let payments: Payments;

    beforeAll(async () => {
      harness = await open();
      payments = harness.payments;
    });
    afterAll(async () => {
      await harness?.close();
    });

    const checkout = (customerId: string | null = null, amountCents = AMOUNT): Promise<CheckoutCreated & { depositId: string }> => {
      const depositId = `dep_${randomUUID().slice(0, 12)}`;
      return payments
        .createCheckout({
          depositId,
          tenantId: 'ten_contract',
          amountCents,
          customerId,
          successUrl: 'https://cp.example/billing/done?session={CHECKOUT_SESSION_ID}',
          cancelUrl: 'https://cp.example/billing/cancelled',
        })
        .then((created) => ({ ...created, depositId }));
    };

    /** A paid checkout and the card it saved. */
    const savedCard = async () => {
      const created = await checkout();
      await harness.pay(created.sessionId, { brand: 'visa', last4: '4242' });
      const state = await payments.getCheckout(created.sessionId);
      expect(state?.card).not.toBeNull();
      return { customerId: state!.customerId ?? created.customerId ?? '', paymentMethodId: state!.card!.paymentMethodId };
    };

    it('is named', () => {
      expect(payments.name).toBe(name);
    });

    it('opens a checkout that stays open, without a card, until it is paid', async () => {
      const created = await checkout();
      expect(created.sessionId.length).toBeGreaterThan(0);
      expect(new URL(created.url).protocol).toMatch(/^https?:$/);
      const state = await payments.getCheckout(created.sessionId);
      expect(state).toMatchObject({ sessionId: created.sessionId, status: 'open', amountCents: AMOUNT, depositId: created.depositId, card: null });
      // asking again changes nothing
      expect((await payments.getCheckout(created.sessionId))?.status).toBe('open');
    });

    it('once paid, says paid with the amount, the deposit id and the saved card', async () => {
      const created = await checkout(null, 1_234);
      await harness.pay(created.sessionId, { brand: 'visa', last4: '4242' });
      const state = await payments.getCheckout(created.sessionId);
      expect(state).toMatchObject({ sessionId: created.sessionId, status: 'paid', amountCents: 1_234, depositId: created.depositId });
      expect(state!.card).not.toBeNull();
      expect(state!.card!.paymentMethodId.length).toBeGreaterThan(0);
      expect(state!.card!.brand.length).toBeGreaterThan(0);
      expect(state!.card!.last4).toMatch(/^\d{4}$/);
      if (created.customerId !== null) expect(state!.customerId).toBe(created.customerId);
    });

    it('opens the next checkout on the customer it is given', async () => {
      const first = await checkout();
      if (first.customerId === null) return;
      const second = await checkout(first.customerId);
      expect(second.customerId).toBe(first.customerId);
      expect(second.sessionId).not.toBe(first.sessionId);
      expect((await payments.getCheckout(second.sessionId))?.customerId).toBe(first.customerId);
    });

    it('says expired for a checkout that expired unpaid', async () => {
      const created = await checkout();
      await harness.expire(created.sessionId);
      expect(await payments.getCheckout(created.sessionId)).toMatchObject({ status: 'expired', amountCents: AMOUNT, depositId: created.depositId, card: null });
    });

    it('answers null for a checkout it does not know', async () => {
      expect(await payments.getCheckout(`cs_unknown_${randomUUID().replace(/-/g, '')}`)).toBeNull();
    });

    it('charges the saved card off session, and the same idempotency key never charges twice', async () => {
      const card = await savedCard();
      const charge = { ...card, amountCents: 5_000, idempotencyKey: `auto-recharge:${randomUUID()}` };
      const first = await payments.chargeOffSession(charge);
      expect(first.ok).toBe(true);
      if (!first.ok) return;
      expect(first.paymentId.length).toBeGreaterThan(0);

      const again = await payments.chargeOffSession(charge);
      expect(again).toEqual(first);

      const next = await payments.chargeOffSession({ ...charge, idempotencyKey: `auto-recharge:${randomUUID()}` });
      expect(next.ok).toBe(true);
      if (next.ok) expect(next.paymentId).not.toBe(first.paymentId);
    });

    it('detaches a card, and detaching it again is no error', async () => {
      const card = await savedCard();
      await payments.detachCard(card.paymentMethodId);
      await payments.detachCard(card.paymentMethodId);
    });
  });
}
