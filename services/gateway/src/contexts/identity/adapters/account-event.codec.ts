import type { EventEncoder } from '@marketplace/eventsourcing';
import { accountV1 } from '@marketplace/proto';
import type { AccountCreated } from '../domain/account.events.js';

/** Account events travel on the log as protobuf `marketplace.account.v1.AccountEvent`. */
export const ACCOUNT_EVENT_CONTENT_TYPE = 'application/protobuf';

/** The outbox relay's encoder for the identity schema's store, which holds only account events. */
export const encodeAccountEvent: EventEncoder = (event) => {
  if (event.type !== 'AccountCreated')
    throw new Error(`${event.streamId} holds an event that is not an account event: ${event.type}`);
  const data = event.data as AccountCreated['data'];
  const message = accountV1.AccountEvent.encode({
    eventId: event.eventId,
    accountId: data.accountId,
    version: event.version,
    occurredAtMs: event.occurredAt,
    actor: event.metadata.actor,
    correlationId: event.metadata.correlationId ?? '',
    payload: {
      $case: 'created',
      value: {
        role: data.role,
        name: data.name,
        email: data.email,
        company: data.company ?? '',
        country: data.country ?? '',
      },
    },
  });
  return { value: message.finish(), contentType: ACCOUNT_EVENT_CONTENT_TYPE };
};
