import type { DomainEvent } from './decider.js';
import type { EventMetadata, RecordedEvent } from './event-store.port.js';

/**
 * A row of the events table, as the Database port returns it. A type alias rather than an interface, so that it
 * satisfies the port's `Row` (an index signature).
 */
export type EventRow = {
  readonly global_position: string;
  readonly stream_id: string;
  readonly stream_type: string;
  readonly version: number;
  readonly event_id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: EventMetadata;
  readonly occurred_at: Date;
};

export const EVENT_COLUMNS =
  'global_position, stream_id, stream_type, version, event_id, type, data, metadata, occurred_at';

export const toRecordedEvent = <E extends DomainEvent>(row: EventRow): RecordedEvent<E> => ({
  eventId: row.event_id,
  streamId: row.stream_id,
  streamType: row.stream_type,
  version: row.version,
  type: row.type,
  data: row.data,
  metadata: row.metadata,
  occurredAt: row.occurred_at.getTime(),
  globalPosition: row.global_position,
});
