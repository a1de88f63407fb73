import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WebhookReceiver {
  url: string;
  /** Deliveries received in all, a retry of an event counting again. */
  deliveries(): number;
  close(): Promise<void>;
}

/**
 * The tenant's webhook endpoint for the crash test, in the test's own process so that it outlives every kill: it
 * answers 204 to every delivery and notes the event's id (the `webhook-id` header) in `received`.
 */
export async function startWebhookReceiver(received: Set<string>): Promise<WebhookReceiver> {
  let deliveries = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      if (req.method === 'POST' && typeof id === 'string') {
        received.add(id);
        deliveries++;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries: () => deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
