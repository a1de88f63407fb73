import type { Metrics, WebhookOutcome } from '../../core/ports/metrics.ts';
import type { DeliveryWorker } from '../../core/webhooks/delivery-worker.ts';
import type { AttemptReport } from '../../core/webhooks/send-attempt.ts';

const outcomeOf = (report: AttemptReport): WebhookOutcome =>
  report.disabled ? 'disabled' : report.outcome === 'succeeded' ? 'delivered' : report.outcome === 'refused' ? 'blocked' : 'failed';

/** Every delivery attempt of the worker, counted and timed (webhook_deliveries_total, webhook_delivery_duration_seconds). */
export function observeWebhookDeliveries(worker: DeliveryWorker, metrics: Metrics): void {
  worker.addObserver(() => {
    const done = metrics.webhookDeliveryStarted();
    return (report) => done(outcomeOf(report), report.responseStatus);
  });
}
