import type { Transaction } from '@marketplace/database';
import { fold, type Command, type Decider, type DomainEvent } from './decider.js';
import {
  WrongExpectedVersionError,
  type CompanionWrite,
  type EventStore,
  type RecordedEvent,
} from './event-store.port.js';

export interface HandleCommandOptions<C extends Command, E extends DomainEvent, S> {
  readonly store: EventStore;
  readonly decider: Decider<C, E, S>;
  readonly streamId: string;
  readonly streamType: string;
  readonly command: C;
  /**
   * How many times to re-read the stream and decide again after another writer appended to it first; 0 (the
   * default) reports the conflict to the caller. Retry only commands whose decision may be remade safely.
   */
  readonly retryOnConflict?: number;
  /**
   * The caller has just allocated the stream id (from a sequence): there is nothing to read, so the first attempt
   * decides on the initial state and expects `no_stream` without a round trip. An id handed out twice is still
   * refused by the store; a retry then reads the stream as usual.
   */
  readonly newStream?: boolean;
  /**
   * Runs inside the caller's transaction, so the caller's own rows commit or roll back with the events. A
   * conflict leaves the transaction usable; retries then see other writers' commits only at isolation level
   * read committed (the default).
   */
  readonly tx?: Transaction;
  /**
   * The caller's row of the decided state (its version the stream's after the append), written by the append's
   * own statement: no transaction is needed for the two to commit together.
   */
  readonly companion?: (decided: { readonly state: S; readonly version: number }) => CompanionWrite;
}

export interface CommandResult<E extends DomainEvent, S> {
  /** The state after the new events. */
  readonly state: S;
  /** The events the command appended (none when the decider decided nothing needs to change). */
  readonly events: RecordedEvent<E>[];
  /** The stream's version after the append: the expected version for the stream's next command. */
  readonly version: number;
}

/**
 * The write path of every aggregate: read the stream, fold it into the state, decide, append with the version
 * read as the expected version (`no_stream` for a new stream). Throws the decider's error as it is, and
 * WrongExpectedVersionError when another writer won every attempt.
 */
export const handleCommand = async <C extends Command, E extends DomainEvent, S>(
  options: HandleCommandOptions<C, E, S>,
): Promise<CommandResult<E, S>> => {
  const { store, decider, streamId, streamType, command, tx } = options;
  const retries = options.retryOnConflict ?? 0;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new RangeError(`retryOnConflict must be a non-negative integer, got ${retries}`);
  }
  for (let attempt = 0; ; attempt++) {
    const stream =
      attempt === 0 && options.newStream === true
        ? { version: 0, events: [] as RecordedEvent<E>[] }
        : await store.readStream<E>(streamId, tx);
    const state = fold(
      decider,
      stream.events.map(({ type, data }) => ({ type, data }) as E),
    );
    const decided = decider.decide(command, state);
    if (decided.length === 0) return { state, events: [], version: stream.version };
    const { metadata } = command;
    const decidedState = fold(decider, decided, state);
    try {
      const events = await store.append(
        {
          streamId,
          streamType,
          expectedVersion: stream.version === 0 ? 'no_stream' : stream.version,
          events: decided,
          metadata: {
            actor: metadata.actor,
            correlationId: metadata.correlationId,
            causationId: metadata.causationId,
            traceparent: metadata.traceparent,
          },
          now: metadata.now,
          ...(options.companion && {
            companion: options.companion({
              state: decidedState,
              version: stream.version + decided.length,
            }),
          }),
        },
        tx,
      );
      return {
        state: decidedState,
        events,
        version: events.at(-1)?.version ?? stream.version,
      };
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError) || attempt >= retries) throw error;
    }
  }
};
