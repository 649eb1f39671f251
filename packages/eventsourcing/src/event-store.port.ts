import type { Queryable } from '@marketplace/database';
import type { Actor, DomainEvent } from './decider.js';

/** What the event store records about each event besides its payload. */
export interface EventMetadata {
  readonly actor?: Actor;
  readonly correlationId?: string;
  readonly causationId?: string;
  /** W3C trace context of the command that produced the event; travels to the log as a header. */
  readonly traceparent?: string;
}

export interface RecordedEvent<E extends DomainEvent = DomainEvent> {
  readonly eventId: string;
  /** Aggregate id, e.g. `product_42`; the partition key on the log. */
  readonly streamId: string;
  /** Aggregate type, e.g. `listing`; selects the topic `marketplace.<type>.v1`. */
  readonly streamType: string;
  /** 1 for the first event of a stream. */
  readonly version: number;
  readonly type: E['type'];
  readonly data: E['data'];
  readonly metadata: EventMetadata;
  /** Epoch milliseconds. */
  readonly occurredAt: number;
  /** Position in the store's commit order (as a decimal string: bigint in the database). */
  readonly globalPosition: string;
}

/** `no_stream`: the stream must not exist; a number: the stream must be at exactly that version; `any`. */
export type ExpectedVersion = number | 'no_stream' | 'any';

export class WrongExpectedVersionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
  ) {
    super(`stream ${streamId} is not at the expected version ${String(expected)}`);
    this.name = 'WrongExpectedVersionError';
  }
}

/**
 * A write of the caller's (a row of a list, a key) carried by the append's own statement, as a data-modifying
 * CTE: the events and the row cost one round trip and commit together, without a transaction of their own
 * (docs/architecture.md, "How work moves").
 */
export interface CompanionWrite {
  /**
   * One INSERT, UPDATE or DELETE. `whenAppended` is a condition true only when every event went in: the statement
   * must write nothing otherwise (`insert … select … where <whenAppended>`), since a CTE runs even when the append
   * is refused. Its placeholders are numbered from `firstParam`.
   */
  readonly sql: (names: { readonly whenAppended: string; readonly firstParam: number }) => string;
  readonly params: readonly unknown[];
}

/** One companion write, or several (each a CTE of the append's statement). */
export type CompanionWrites = CompanionWrite | readonly CompanionWrite[];

export interface AppendRequest<E extends DomainEvent = DomainEvent> {
  readonly streamId: string;
  readonly streamType: string;
  readonly expectedVersion: ExpectedVersion;
  readonly events: readonly E[];
  readonly metadata: EventMetadata;
  /** Epoch milliseconds recorded as occurredAt. */
  readonly now: number;
  /** Written in the same statement as the events, only when they are. */
  readonly companion?: CompanionWrites;
}

/** One stream's part of a multi-stream append: an append request without a companion of its own. */
export type StreamAppend<E extends DomainEvent = DomainEvent> = Omit<AppendRequest<E>, 'companion'>;

export interface MultiStreamAppendRequest<E extends DomainEvent = DomainEvent> {
  /** Each stream at most once; every stream's expectation must hold, or nothing is appended. */
  readonly streams: readonly StreamAppend<E>[];
  /** Written in the same statement as the events, only when every event of every stream went in. */
  readonly companion?: CompanionWrites;
}

export interface EventStore {
  /** All events of a stream in version order; `version` 0 when the stream does not exist. */
  readStream<E extends DomainEvent>(
    streamId: string,
    tx?: Queryable,
  ): Promise<{ version: number; events: RecordedEvent<E>[] }>;
  /**
   * Appends in one transaction (or in `tx`, so a caller can write its own rows atomically with the events).
   * The events table is also the outbox: whatever is appended is published by the relay, nothing else is.
   * Throws WrongExpectedVersionError when the expectation fails (detected by a unique constraint).
   */
  append<E extends DomainEvent>(request: AppendRequest<E>, tx?: Queryable): Promise<RecordedEvent<E>[]>;
  /**
   * Appends to several streams at once, all or nothing: one statement (in `tx` when given), so a batch of
   * writes (a bulk upsert's creates) costs one round trip and one commit instead of one each. Answers each
   * stream's recorded events in the order of `streams` (a stream sent with no events is not checked, as with
   * `append`). Throws WrongExpectedVersionError naming a stream whose
   * expectation failed, and then appends nothing (in `tx`, the transaction stays usable, as with `append`).
   */
  appendMany<E extends DomainEvent>(
    request: MultiStreamAppendRequest<E>,
    tx?: Queryable,
  ): Promise<RecordedEvent<E>[][]>;
}
