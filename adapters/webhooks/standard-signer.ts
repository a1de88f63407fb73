import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { WebhookSigner } from '../../core/ports/webhook-transport.ts';

/** Standard Webhooks (standardwebhooks package): whsec_ + base64 of 32 random bytes; `v1,<base64 HMAC-SHA256>` of `id.timestamp.body`. */
export class StandardWebhookSigner implements WebhookSigner {
  newSecret(): string {
    return `whsec_${randomBytes(32).toString('base64')}`;
  }

  sign(secret: string, messageId: string, at: Date, body: string): string {
    return new Webhook(secret).sign(messageId, at, body);
  }
}
