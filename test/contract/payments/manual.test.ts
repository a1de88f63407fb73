import { ManualPayments } from '../../../adapters/payments/manual/adapter.ts';
import { paymentsContract } from '../payments-contract.ts';

paymentsContract('manual', async () => {
  const payments = new ManualPayments('http://127.0.0.1:1');
  return {
    payments,
    async pay(sessionId) {
      if (!payments.pay(sessionId)) throw new Error(`session ${sessionId} cannot be paid`);
    },
    async expire(sessionId) {
      payments.expire(sessionId);
    },
    async close() {},
  };
});
