import type { DecodedEvent, EventEncoder, RecordedEvent } from '@marketplace/eventsourcing';
import { parseActor } from '@marketplace/eventsourcing';
import { quoteV1 } from '@marketplace/proto';
import type { QuoteEvent } from '../domain/quote.events.js';
import { fromQuoteRequestMessage, toQuoteRequestMessage } from './quote-proto.mapper.js';

/** Quote events travel on the log as protobuf `marketplace.quote.v1.QuoteEvent`. */
export const QUOTE_EVENT_CONTENT_TYPE = 'application/protobuf';

/** What a `QuoteEvent` message carries. */
export type DecodedQuoteEvent = DecodedEvent<QuoteEvent>;

// A record rather than a list, so the compiler checks it names every quote event.
const QUOTE_EVENT_TYPES: Record<QuoteEvent['type'], true> = {
  QuoteRequested: true,
  QuoteResponded: true,
  QuoteClaimed: true,
  QuoteBuyerResponded: true,
};

/** The quote schema's store holds only quote events; anything else is a bug worth stopping for. */
const isQuoteEvent = (event: RecordedEvent): event is RecordedEvent<QuoteEvent> =>
  Object.hasOwn(QUOTE_EVENT_TYPES, event.type);

const payloadOf = (event: RecordedEvent<QuoteEvent>): quoteV1.QuoteEvent['payload'] => {
  const quoteRequest = toQuoteRequestMessage(event.data.quoteRequest, event.version);
  switch (event.type) {
    case 'QuoteRequested':
      return { $case: 'requested', value: { quoteRequest } };
    case 'QuoteResponded':
      return { $case: 'responded', value: { quoteRequest } };
    case 'QuoteClaimed':
      return { $case: 'claimed', value: { quoteRequest } };
    case 'QuoteBuyerResponded':
      return { $case: 'buyerResponded', value: { quoteRequest } };
  }
};

/** The outbox relay's encoder for the quote store. */
export const encodeQuoteEvent: EventEncoder = (event) => {
  if (!isQuoteEvent(event))
    throw new Error(`${event.streamId} holds an event that is not a quote event: ${event.type}`);
  const message = quoteV1.QuoteEvent.encode({
    eventId: event.eventId,
    streamId: event.streamId,
    version: event.version,
    occurredAtMs: event.occurredAt,
    actor: event.metadata.actor,
    correlationId: event.metadata.correlationId ?? '',
    payload: payloadOf(event),
  });
  return { value: message.finish(), contentType: QUOTE_EVENT_CONTENT_TYPE };
};

const EVENT_TYPE_OF_CASE = {
  requested: 'QuoteRequested',
  responded: 'QuoteResponded',
  claimed: 'QuoteClaimed',
  buyerResponded: 'QuoteBuyerResponded',
} as const;

const eventOf = (payload: quoteV1.QuoteEvent['payload']): QuoteEvent => {
  switch (payload?.$case) {
    case 'requested':
    case 'responded':
    case 'claimed':
    case 'buyerResponded': {
      if (!payload.value.quoteRequest) throw new Error(`QuoteEvent ${payload.$case} without a quote request`);
      const quoteRequest = fromQuoteRequestMessage(payload.value.quoteRequest);
      return { type: EVENT_TYPE_OF_CASE[payload.$case], data: { quoteRequest } };
    }
    case undefined:
      throw new Error('QuoteEvent without a payload (written by a newer version?)');
  }
};

/** Throws on bytes that are not a QuoteEvent this version understands. */
export const decodeQuoteEvent = (bytes: Uint8Array): DecodedQuoteEvent => {
  const message = quoteV1.QuoteEvent.decode(bytes);
  return {
    eventId: message.eventId,
    streamId: message.streamId,
    version: message.version,
    occurredAt: message.occurredAtMs,
    actor: message.actor && parseActor(message.actor),
    correlationId: message.correlationId === '' ? undefined : message.correlationId,
    event: eventOf(message.payload),
  };
};
