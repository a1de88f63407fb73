/**
 * Why the embedded processor may not serve a real cloud unless asked for by name: its checkout page credits
 * money that no card paid, and with a real cloud that money rents real machines.
 */
export function unpaidRealCloudsMessage(realClouds: readonly string[], setting: 'environment' | 'embedding'): string {
  const clouds = realClouds.join(', ');
  const fix =
    setting === 'environment'
      ? 'set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET to take card payments through Stripe, or PAYMENTS=manual for a trial'
      : "pass payments: { kind: 'stripe', secretKey, webhookSecret } (STRIPE_SECRET_KEY), or { kind: 'manual' } (PAYMENTS=manual) for a trial";
  return (
    `${setting === 'environment' ? 'STRIPE_SECRET_KEY or PAYMENTS' : 'payments'}: ${clouds} ${realClouds.length > 1 ? 'are' : 'is'} enabled ` +
    `(real machines, real money) but no card processor is named; ${fix} on the embedded processor, whose checkout page credits pretend money`
  );
}
