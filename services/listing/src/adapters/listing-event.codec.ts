import { parseActor } from '@marketplace/eventsourcing';
import type { DecodedEvent, EventEncoder, RecordedEvent } from '@marketplace/eventsourcing';
import { listingV1 } from '@marketplace/proto';
import type { ListingEvent } from '../domain/listing.events.js';
import { fromListingMessage, toListingMessage } from './listing-proto.mapper.js';

/** Listing events travel on the log as protobuf `marketplace.listing.v1.ListingEvent`. */
export const LISTING_EVENT_CONTENT_TYPE = 'application/protobuf';

/** What a `ListingEvent` message carries; its `streamId` is the message's `product_id`. */
export type DecodedListingEvent = DecodedEvent<ListingEvent>;

// A record rather than a list, so the compiler checks it names every listing event.
const LISTING_EVENT_TYPES: Record<ListingEvent['type'], true> = {
  ListingCreated: true,
  ListingUpdated: true,
  ListingQuantitySet: true,
  StockReserved: true,
  StockReleased: true,
  ListingWithdrawn: true,
  ListingRelisted: true,
  ListingShippingSet: true,
};

/** The listing schema's store holds only listing events; anything else is a bug worth stopping for. */
const isListingEvent = (event: RecordedEvent): event is RecordedEvent<ListingEvent> =>
  Object.hasOwn(LISTING_EVENT_TYPES, event.type);

const payloadOf = (recorded: RecordedEvent<ListingEvent>): listingV1.ListingEvent['payload'] => {
  // RecordedEvent keeps type and data apart; rejoined, the switch narrows the data to the event's type.
  const event = { type: recorded.type, data: recorded.data } as ListingEvent;
  const listing = toListingMessage(event.data.listing, recorded.version);
  switch (event.type) {
    case 'ListingCreated':
      return { $case: 'created', value: { listing } };
    case 'ListingUpdated':
      return { $case: 'updated', value: { listing, changedFields: [...event.data.changedFields] } };
    case 'ListingQuantitySet':
      return { $case: 'quantitySet', value: { listing } };
    case 'StockReserved':
      return { $case: 'stockReserved', value: { listing, ...reservationOf(event.data) } };
    case 'StockReleased':
      return { $case: 'stockReleased', value: { listing, ...reservationOf(event.data) } };
    case 'ListingWithdrawn':
      return { $case: 'withdrawn', value: { listing } };
    case 'ListingRelisted':
      return { $case: 'relisted', value: { listing } };
    case 'ListingShippingSet':
      return { $case: 'shippingSet', value: { listing } };
  }
};

const reservationOf = ({ reservationId, quantity }: { reservationId: string; quantity: number }) => ({
  reservationId,
  quantity,
});

/** The outbox relay's encoder for the listing store. */
export const encodeListingEvent: EventEncoder = (event) => {
  if (!isListingEvent(event))
    throw new Error(`${event.streamId} holds an event that is not a listing event: ${event.type}`);
  const message = listingV1.ListingEvent.encode({
    eventId: event.eventId,
    productId: event.streamId,
    version: event.version,
    occurredAtMs: event.occurredAt,
    actor: event.metadata.actor,
    correlationId: event.metadata.correlationId ?? '',
    payload: payloadOf(event),
  });
  return { value: message.finish(), contentType: LISTING_EVENT_CONTENT_TYPE };
};

const listingIn = (value: { listing?: listingV1.Listing | undefined }, type: ListingEvent['type']) => {
  if (!value.listing) throw new Error(`${type} without a listing`);
  return fromListingMessage(value.listing);
};

const eventOf = (payload: listingV1.ListingEvent['payload']): ListingEvent => {
  switch (payload?.$case) {
    case 'created':
      return { type: 'ListingCreated', data: { listing: listingIn(payload.value, 'ListingCreated') } };
    case 'updated':
      return {
        type: 'ListingUpdated',
        data: {
          listing: listingIn(payload.value, 'ListingUpdated'),
          changedFields: payload.value.changedFields,
        },
      };
    case 'quantitySet':
      return {
        type: 'ListingQuantitySet',
        data: { listing: listingIn(payload.value, 'ListingQuantitySet') },
      };
    case 'stockReserved':
      return {
        type: 'StockReserved',
        data: { listing: listingIn(payload.value, 'StockReserved'), ...reservationOf(payload.value) },
      };
    case 'stockReleased':
      return {
        type: 'StockReleased',
        data: { listing: listingIn(payload.value, 'StockReleased'), ...reservationOf(payload.value) },
      };
    case 'withdrawn':
      return { type: 'ListingWithdrawn', data: { listing: listingIn(payload.value, 'ListingWithdrawn') } };
    case 'relisted':
      return { type: 'ListingRelisted', data: { listing: listingIn(payload.value, 'ListingRelisted') } };
    case 'shippingSet':
      return {
        type: 'ListingShippingSet',
        data: { listing: listingIn(payload.value, 'ListingShippingSet') },
      };
    case undefined:
      throw new Error('ListingEvent without a payload (written by a newer version?)');
  }
};

/** Throws on bytes that are not a ListingEvent this version understands. */
export const decodeListingEvent = (bytes: Uint8Array): DecodedListingEvent => {
  const message = listingV1.ListingEvent.decode(bytes);
  return {
    eventId: message.eventId,
    streamId: message.productId,
    version: message.version,
    occurredAt: message.occurredAtMs,
    actor: message.actor && parseActor(message.actor),
    correlationId: message.correlationId === '' ? undefined : message.correlationId,
    event: eventOf(message.payload),
  };
};
