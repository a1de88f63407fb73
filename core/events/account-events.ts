import type { AutoRechargePayment, Deposit } from '../billing/account.ts';
import { formatUsd, type Cents } from '../money.ts';
import type { Reservation } from '../reservations/reservation.ts';
import type { NewEvent } from './event.ts';

/** The events of accounts and reservations, as their changes emit them (core/ports/event-outbox.ts). */

const usd = formatUsd;

export const depositEvent = (deposit: Deposit, status: 'confirmed' | 'rejected', at: Date): NewEvent => ({
  tenantId: deposit.tenantId,
  type: status === 'confirmed' ? 'deposit.confirmed' : 'deposit.rejected',
  data: { deposit_id: deposit.id, kind: deposit.kind, amount_cents: deposit.amountCents, amount_usd: usd(deposit.amountCents), reference: deposit.reference },
  at,
});

export const breakerEvent = (tenantId: string, reason: string, terminating: number, at: Date): NewEvent => ({
  tenantId,
  type: 'breaker.tripped',
  data: { reason, instances_terminating: terminating, resume: 'POST /v1/billing/resume once funds are in' },
  at,
});

export const autoRechargeFailedEvent = (payment: AutoRechargePayment, error: string, at: Date): NewEvent => ({
  tenantId: payment.tenantId,
  type: 'auto_recharge.failed',
  data: { payment_id: payment.id, amount_cents: payment.amountCents, amount_usd: usd(payment.amountCents), error, suspended: true },
  at,
});

export const balanceLowEvent = (tenantId: string, figures: { balanceCents: Cents; availableCents: Cents; burnCentsPerHour: Cents; thresholdCents: Cents }, at: Date): NewEvent => ({
  tenantId,
  type: 'balance.low',
  data: {
    balance_cents: figures.balanceCents,
    available_cents: figures.availableCents,
    available_usd: usd(figures.availableCents),
    burn_cents_per_hour: figures.burnCentsPerHour,
    threshold_cents: figures.thresholdCents,
  },
  at,
});

export const reservationEvent = (reservation: Reservation, outcome: 'started' | 'failed', at: Date): NewEvent => ({
  tenantId: reservation.tenantId,
  type: outcome === 'started' ? 'reservation.started' : 'reservation.failed',
  data: {
    reservation_id: reservation.id,
    name: reservation.name,
    instance_id: reservation.instanceId,
    starts_at: reservation.startsAt.toISOString(),
    ends_at: reservation.endsAt.toISOString(),
    failure: reservation.failure,
  },
  at,
});
