import { topicOf, type LogMessage } from '@marketplace/eventlog';
import type { Actor } from './decider.js';
import type { RecordedEvent } from './event-store.port.js';

/** An event's payload as the service encodes it for the log (protobuf, for the marketplace's services). */
export interface EncodedEvent {
  readonly value: Uint8Array;
  /** The media type of `value`, sent as the `content-type` header, e.g. `application/protobuf`. */
  readonly contentType: string;
}

export type EventEncoder = (event: RecordedEvent) => EncodedEvent;

/**
 * What a service's codec reads back from a log message: the event and the envelope its consumers need. One
 * shape for every service, keyed by `streamId` whatever the stream is (a product, a quote, a saved search), as
 * `RecordedEvent` is: the log message is keyed by it (`toLogMessage`).
 */
export interface DecodedEvent<E> {
  readonly eventId: string;
  readonly streamId: string;
  readonly version: number;
  readonly occurredAt: number;
  readonly actor?: Actor;
  readonly correlationId?: string;
  readonly event: E;
}

/** `marketplace.<streamType>.v1.<EventType>`, the CloudEvents type of an event. */
export const cloudEventTypeOf = (event: Pick<RecordedEvent, 'streamType' | 'type'>): string =>
  `${topicOf(event.streamType)}.${event.type}`;

/** W3C trace context: `version-traceid-parentid-flags`. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The headers of an event on the log: CloudEvents 1.0 in the Kafka binary mode (`ce_` attributes, the payload's
 * media type as `content-type`), plus the W3C `traceparent` of the command that produced it. A malformed
 * traceparent is left out rather than sent: the log refuses unsafe header values, and one bad event must not
 * stop the relay.
 */
export const cloudEventHeaders = (
  event: RecordedEvent,
  { source, contentType }: { readonly source: string; readonly contentType: string },
): Record<string, string> => {
  const headers: Record<string, string> = {
    ce_specversion: '1.0',
    ce_id: event.eventId,
    ce_type: cloudEventTypeOf(event),
    ce_source: source,
    ce_subject: event.streamId,
    ce_time: new Date(event.occurredAt).toISOString(),
    'content-type': contentType,
  };
  const { traceparent } = event.metadata;
  if (traceparent !== undefined && TRACEPARENT.test(traceparent)) headers['traceparent'] = traceparent;
  return headers;
};

/** The log message of an event: keyed by its stream, so a stream's events stay in order. */
export const toLogMessage = (event: RecordedEvent, encode: EventEncoder, source: string): LogMessage => {
  const { value, contentType } = encode(event);
  return { key: event.streamId, value, headers: cloudEventHeaders(event, { source, contentType }) };
};
