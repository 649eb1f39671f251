import { randomUUID } from 'node:crypto';
import type { DeliveredMessage } from '@marketplace/eventlog';
import { accountV1 } from '@marketplace/proto';

let offset = 0;

/** `AccountCreated` as the gateway's outbox relay publishes it on marketplace.account.v1, delivered. */
export const accountCreated = (
  accountId: number,
  profile: { role: 'seller' | 'buyer'; name: string; company?: string; country?: string },
  { version = 1, eventId = randomUUID() }: { version?: number; eventId?: string } = {},
): DeliveredMessage => ({
  topic: 'marketplace.account.v1',
  partition: 0,
  offset: String(offset++),
  key: `account_${accountId}`,
  value: accountV1.AccountEvent.encode({
    eventId,
    accountId,
    version,
    occurredAtMs: 0,
    actor: undefined,
    correlationId: '',
    payload: {
      $case: 'created',
      value: {
        role: profile.role,
        name: profile.name,
        email: 'ops@seller.example',
        company: profile.company ?? '',
        country: profile.country ?? '',
      },
    },
  }).finish(),
  headers: { ce_id: eventId, ce_type: 'marketplace.account.v1.AccountCreated' },
});
