import {
  WrongExpectedVersionError,
  type AppendRequest,
  type DomainEvent,
  type EventStore,
  type MultiStreamAppendRequest,
  type RecordedEvent,
} from '../../src/index.js';

/**
 * A double of the EventStore port for unit tests of code that uses it: streams in a map, the expected-version
 * rule of the real store, and a hook that runs before each append (to let "another writer" in first).
 */
export class InMemoryEventStore implements EventStore {
  readonly streams = new Map<string, RecordedEvent[]>();
  readonly appends: AppendRequest[] = [];
  /** How many times a stream was read. */
  reads = 0;
  beforeAppend: (request: AppendRequest) => Promise<void> = async () => undefined;
  #position = 0;

  async readStream<E extends DomainEvent>(streamId: string) {
    this.reads++;
    const events = (this.streams.get(streamId) ?? []) as RecordedEvent<E>[];
    return { version: events.length, events: [...events] };
  }

  async append<E extends DomainEvent>(request: AppendRequest<E>): Promise<RecordedEvent<E>[]> {
    await this.beforeAppend(request);
    const stream = this.streams.get(request.streamId) ?? [];
    const expected = request.expectedVersion === 'no_stream' ? 0 : request.expectedVersion;
    if (expected !== 'any' && expected !== stream.length) {
      throw new WrongExpectedVersionError(request.streamId, request.expectedVersion);
    }
    this.appends.push(request);
    const recorded = request.events.map((event, index): RecordedEvent<E> => ({
      eventId: `event-${++this.#position}`,
      streamId: request.streamId,
      streamType: request.streamType,
      version: stream.length + index + 1,
      type: event.type,
      data: event.data,
      metadata: request.metadata,
      occurredAt: request.now,
      globalPosition: String(this.#position),
    }));
    this.streams.set(request.streamId, [...stream, ...recorded]);
    return recorded;
  }

  async appendMany<E extends DomainEvent>(
    request: MultiStreamAppendRequest<E>,
  ): Promise<RecordedEvent<E>[][]> {
    for (const stream of request.streams) {
      const length = this.streams.get(stream.streamId)?.length ?? 0;
      const expected = stream.expectedVersion === 'no_stream' ? 0 : stream.expectedVersion;
      if (stream.events.length > 0 && expected !== 'any' && expected !== length) {
        throw new WrongExpectedVersionError(stream.streamId, stream.expectedVersion);
      }
    }
    const recorded: RecordedEvent<E>[][] = [];
    for (const stream of request.streams) recorded.push(await this.append(stream));
    return recorded;
  }
}
