import { parseActor } from '@marketplace/eventsourcing';
import type { DecodedEvent, EventEncoder, RecordedEvent } from '@marketplace/eventsourcing';
import { subscriptionV1 } from '@marketplace/proto';
import type { EmailConfirmationEvent } from '../domain/email-confirmation.js';
import type { SavedSearchesMatched } from '../domain/match-notification.js';
import type { SubscriptionEvent as SavedSearchEvent } from '../domain/subscription.js';
import { fromSubscriptionMessage, toSubscriptionMessage } from './subscription-proto.mapper.js';

/**
 * The events of the store: a saved search's, an email address's confirmation and a listing's matches (the same
 * topic).
 */
type SubscriptionEvent = SavedSearchEvent | EmailConfirmationEvent | SavedSearchesMatched;

/** Subscription events travel on the log as protobuf `marketplace.subscription.v1.SubscriptionEvent`. */
export const SUBSCRIPTION_EVENT_CONTENT_TYPE = 'application/protobuf';

const SUBSCRIPTION_EVENT_TYPES: Record<SubscriptionEvent['type'], true> = {
  SubscriptionCreated: true,
  SubscriptionDeleted: true,
  WebhookSecretRotated: true,
  EmailConfirmationRequested: true,
  EmailAddressConfirmed: true,
  SavedSearchesMatched: true,
};

const isSubscriptionEvent = (event: RecordedEvent): event is RecordedEvent<SubscriptionEvent> =>
  Object.hasOwn(SUBSCRIPTION_EVENT_TYPES, event.type);

const payloadOf = (event: RecordedEvent<SubscriptionEvent>): subscriptionV1.SubscriptionEvent['payload'] => {
  const typed = { type: event.type, data: event.data } as SubscriptionEvent;
  switch (typed.type) {
    case 'SubscriptionCreated':
      return { $case: 'created', value: { subscription: toSubscriptionMessage(typed.data.subscription) } };
    case 'SubscriptionDeleted':
      return { $case: 'deleted', value: { deletedAtMs: typed.data.deletedAt } };
    case 'WebhookSecretRotated':
      return {
        $case: 'webhookSecretRotated',
        value: {
          secretGeneration: typed.data.generation,
          rotatedAtMs: typed.data.rotatedAt,
          previousValidUntilMs: typed.data.previousValidUntil,
        },
      };
    case 'EmailConfirmationRequested':
      return {
        $case: 'emailConfirmationRequested',
        value: {
          mailbox: typed.data.mailbox,
          requestId: typed.data.requestId,
          requestedAtMs: typed.data.requestedAt,
          expiresAtMs: typed.data.expiresAt,
        },
      };
    case 'EmailAddressConfirmed':
      return {
        $case: 'emailAddressConfirmed',
        value: {
          mailbox: typed.data.mailbox,
          requestId: typed.data.requestId,
          confirmedAtMs: typed.data.confirmedAt,
        },
      };
    case 'SavedSearchesMatched':
      return {
        $case: 'savedSearchesMatched',
        value: {
          productId: typed.data.productId,
          subscriptionIds: [...typed.data.subscriptionIds],
          matchedAtMs: typed.data.matchedAt,
        },
      };
  }
};

/** The outbox relay's encoder for the subscription store. */
export const encodeSubscriptionEvent: EventEncoder = (event) => {
  if (!isSubscriptionEvent(event))
    throw new Error(`${event.streamId} holds an event that is not a subscription event: ${event.type}`);
  const message = subscriptionV1.SubscriptionEvent.encode({
    eventId: event.eventId,
    subscriptionId: event.streamId,
    version: event.version,
    occurredAtMs: event.occurredAt,
    actor: event.metadata.actor,
    correlationId: event.metadata.correlationId ?? '',
    payload: payloadOf(event),
  });
  return { value: message.finish(), contentType: SUBSCRIPTION_EVENT_CONTENT_TYPE };
};

const eventOf = (payload: subscriptionV1.SubscriptionEvent['payload']): SubscriptionEvent => {
  switch (payload?.$case) {
    case 'created':
      if (!payload.value.subscription) throw new Error('SubscriptionCreated without a subscription');
      return {
        type: 'SubscriptionCreated',
        data: { subscription: fromSubscriptionMessage(payload.value.subscription) },
      };
    case 'deleted':
      return { type: 'SubscriptionDeleted', data: { deletedAt: payload.value.deletedAtMs } };
    case 'webhookSecretRotated':
      return {
        type: 'WebhookSecretRotated',
        data: {
          generation: payload.value.secretGeneration,
          rotatedAt: payload.value.rotatedAtMs,
          previousValidUntil: payload.value.previousValidUntilMs,
        },
      };
    case 'emailConfirmationRequested':
      return {
        type: 'EmailConfirmationRequested',
        data: {
          mailbox: payload.value.mailbox,
          requestId: payload.value.requestId,
          requestedAt: payload.value.requestedAtMs,
          expiresAt: payload.value.expiresAtMs,
        },
      };
    case 'emailAddressConfirmed':
      return {
        type: 'EmailAddressConfirmed',
        data: {
          mailbox: payload.value.mailbox,
          requestId: payload.value.requestId,
          confirmedAt: payload.value.confirmedAtMs,
        },
      };
    case 'savedSearchesMatched':
      return {
        type: 'SavedSearchesMatched',
        data: {
          productId: payload.value.productId,
          subscriptionIds: payload.value.subscriptionIds,
          matchedAt: payload.value.matchedAtMs,
        },
      };
    case undefined:
      throw new Error('SubscriptionEvent without a payload (written by a newer version?)');
  }
};

/** Throws on bytes that are not a SubscriptionEvent this version understands. */
export const decodeSubscriptionEvent = (bytes: Uint8Array): DecodedEvent<SubscriptionEvent> => {
  const message = subscriptionV1.SubscriptionEvent.decode(bytes);
  return {
    eventId: message.eventId,
    streamId: message.subscriptionId,
    version: message.version,
    occurredAt: message.occurredAtMs,
    actor: message.actor && parseActor(message.actor),
    correlationId: message.correlationId === '' ? undefined : message.correlationId,
    event: eventOf(message.payload),
  };
};
