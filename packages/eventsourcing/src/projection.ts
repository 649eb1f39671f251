import { AsyncLocalStorage } from 'node:async_hooks';
import { quoteIdent, type Database, type Migration, type Transaction } from '@marketplace/database';
import type { DeliveredBatch, DeliveredMessage, EventLog, LogConsumer } from '@marketplace/eventlog';

/** The tables `startProjection` needs in the projection's schema, for `migrate(db, schema, projectionMigrations)`. */
export const projectionMigrations: readonly Migration[] = [
  {
    id: 'eventsourcing-projection-001-applied-events',
    sql: (schema) => `
      create table ${schema}.projection_applied_events (
        projection text not null,
        event_id text not null,
        applied_at timestamptz not null default now(),
        primary key (projection, event_id)
      );`,
  },
  {
    id: 'eventsourcing-projection-002-offsets',
    sql: (schema) => `
      create table ${schema}.projection_offsets (
        projection text not null,
        topic text not null,
        partition integer not null,
        committed_offset bigint not null,
        owner_epoch bigint not null,
        primary key (projection, topic, partition)
      );
      create index projection_applied_events_applied_at on ${schema}.projection_applied_events (applied_at);`,
  },
];

/** How long the ids of applied events are kept to catch a re-published copy (a new offset): a day. */
export const DEFAULT_DEDUP_WINDOW_MS = 86_400_000;
/** How often a projection deletes the ids that left the window (more often if the window is shorter). */
const PURGE_INTERVAL_MS = 300_000;

/** An event of a batch as `applyBatch` receives it: decoded, with the message that carried it. */
export interface BatchEvent<E> {
  readonly event: E;
  readonly message: DeliveredMessage;
}

/**
 * How a projection writes its rows, in `tx` only (the batch's transaction): event by event (`apply`), or the
 * whole batch at once (`applyBatch`, so a read model can read and write all the batch's keys in a constant number
 * of statements). Either way the events are the batch's new ones (deduplicated, with `supersedes` only the newest
 * of a key), in offset order.
 */
export type ProjectionApply<E> =
  | {
      /** Writes the projection's rows for one event. */
      readonly apply: (tx: Transaction, event: E, message: DeliveredMessage) => Promise<void>;
      readonly applyBatch?: never;
    }
  | {
      readonly apply?: never;
      /** Writes the projection's rows for the batch's events (never called with none). */
      readonly applyBatch: (tx: Transaction, events: readonly BatchEvent<E>[]) => Promise<void>;
    };

export type ProjectionOptions<E> = ProjectionSettings<E> & ProjectionApply<E>;

interface ProjectionSettings<E> {
  readonly log: EventLog;
  readonly db: Database;
  /** The schema holding the projection's tables (and `projectionMigrations`'). */
  readonly schema: string;
  readonly topic: string;
  /** The consumer group, which also names the projection in its offsets and record of applied events. */
  readonly group: string;
  /** The event a message carries; throw on a message this version cannot read (the log retries its batch). */
  readonly decode: (message: DeliveredMessage) => E;
  /** Where a new group starts; default `beginning` (a projection needs the whole history). */
  readonly from?: 'beginning' | 'latest';
  /** The most messages applied in one transaction (`ConsumeOptions.maxBatch`). */
  readonly maxBatch?: number;
  /**
   * How long an applied event's id is remembered, so that a copy the outbox relay published again (after a
   * crash between publishing and recording its position) is not applied twice. Default a day.
   */
  readonly dedupWindowMs?: number;
  /**
   * True when `event` carries its key's whole state, so that the key's earlier events in the same batch need not
   * be applied (their ids are still recorded): a backlog of one aggregate costs one write. Default: none does.
   */
  readonly supersedes?: (event: E) => boolean;
  /** Called after each batch committed, outside its transaction (e.g. to update an in-memory index). */
  readonly afterBatch?: (batch: DeliveredBatch) => Promise<void>;
}

/** The id a message is deduplicated by: the event id the outbox relay sends as CloudEvents `ce_id`. */
export const eventIdOf = (message: DeliveredMessage): string => {
  const id = message.headers['ce_id'];
  if (id === undefined || id === '') {
    throw new Error(`message ${message.topic}/${message.partition}/${message.offset} has no ce_id header`);
  }
  return id;
};

/** Another member claimed the partition after this one did: the batch is rolled back, nothing applied. */
export class StaleProjectionOwnerError extends Error {
  constructor(group: string, partition: number, epoch: string) {
    super(`projection ${group}: partition ${partition} was claimed by another member after epoch ${epoch}`);
    this.name = 'StaleProjectionOwnerError';
  }
}

/**
 * This member's claim on a partition: its owner epoch and the offset it last committed there (-1: none yet, as a
 * Kafka partition starts at offset 0).
 */
interface Claim {
  readonly epoch: string;
  readonly committedOffset: bigint;
}

interface DecodedMessage<E> {
  readonly message: DeliveredMessage;
  readonly eventId: string;
  readonly event: E;
}

/**
 * Keeps a read model in PostgreSQL up to date from the log, exactly once in effect although the log delivers at
 * least once. Each batch is applied in one transaction (with the other partitions' batches handed over while
 * the previous one ran: see applyBatch), which also moves the partition's stored offset
 * (`projection_offsets`) and records the applied event ids:
 * - a message at or below the stored offset was applied already (a redelivery): skipped without a lookup;
 * - a message whose event id is recorded (a copy the relay published again) or repeated in the batch: skipped;
 * - with `supersedes`, an event a later one of its key in the batch replaces: recorded, not applied;
 * - the offset update is fenced: a member claims a partition by bumping its `owner_epoch` (its first batch
 *   there, read under the row lock with the stored offset), and every later batch updates the offset only
 *   where the epoch is still its own. A member that was superseded rolls its batch back, and its retry claims
 *   afresh, so it re-reads the offset the other member stored. See docs/architecture.md (the batched pipeline).
 */
export const startProjection = async <E>(options: ProjectionOptions<E>): Promise<LogConsumer> => {
  const { db, decode, group, topic } = options;
  const applyEvents = async (tx: Transaction, events: readonly BatchEvent<E>[]): Promise<void> => {
    if (options.applyBatch !== undefined) {
      if (events.length > 0) await options.applyBatch(tx, events);
      return;
    }
    for (const entry of events) await options.apply(tx, entry.event, entry.message);
  };
  const appliedEvents = `${quoteIdent(options.schema)}.projection_applied_events`;
  const offsets = `${quoteIdent(options.schema)}.projection_offsets`;
  const dedupWindowMs = options.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS;
  if (!Number.isSafeInteger(dedupWindowMs) || dedupWindowMs < 1) {
    throw new RangeError(`invalid dedupWindowMs ${dedupWindowMs}: expected a positive integer`);
  }
  const claims = new Map<number, Claim>();
  const purgeIntervalMs = Math.min(PURGE_INTERVAL_MS, dedupWindowMs);
  let lastPurgeAt = Date.now();

  const claim = async (tx: Transaction, partition: number): Promise<Claim> => {
    const { rows } = await tx.query<{ committed_offset: string; owner_epoch: string }>(
      `insert into ${offsets} as o (projection, topic, partition, committed_offset, owner_epoch)
       values ($1, $2, $3, -1, 1)
       on conflict (projection, topic, partition) do update set owner_epoch = o.owner_epoch + 1
       returning committed_offset::text, owner_epoch::text`,
      [group, topic, partition],
    );
    const row = rows[0]!;
    return { epoch: row.owner_epoch, committedOffset: BigInt(row.committed_offset) };
  };

  /** The batch's messages above the stored offset, each event id once (its first copy). */
  const unapplied = (decoded: readonly DecodedMessage<E>[], committedOffset: bigint): DecodedMessage<E>[] => {
    const byId = new Map<string, DecodedMessage<E>>();
    for (const entry of decoded) {
      if (BigInt(entry.message.offset) > committedOffset && !byId.has(entry.eventId)) {
        byId.set(entry.eventId, entry);
      }
    }
    return [...byId.values()];
  };

  /** The events to apply, in order: all but those a later event of their key in the batch supersedes. */
  const notSuperseded = (fresh: readonly DecodedMessage<E>[]): DecodedMessage<E>[] => {
    const { supersedes } = options;
    if (supersedes === undefined) return [...fresh];
    const keysSuperseded = new Set<string>();
    const kept: DecodedMessage<E>[] = [];
    for (let i = fresh.length - 1; i >= 0; i--) {
      const entry = fresh[i]!;
      if (keysSuperseded.has(entry.message.key)) continue;
      kept.push(entry);
      if (supersedes(entry.event)) keysSuperseded.add(entry.message.key);
    }
    return kept.reverse();
  };

  /**
   * Moves the stored offsets of the batches' partitions, each fenced by its epoch, and records the fresh event
   * ids, in one statement: both belong to the transaction, so their order in it does not matter, and a round
   * trip per batch is saved (docs/architecture.md, the batched pipeline). Answers the partitions whose epoch
   * still held and which ids were new; a superseded owner's partition records nothing.
   */
  const moveOffsetsAndRecord = async (
    tx: Transaction,
    moves: readonly { partition: number; claim: Claim; eventIds: readonly string[] }[],
  ): Promise<{ moved: Set<number>; recorded: Set<string> }> => {
    const { rows } = await tx.query<{ moved: number[]; recorded: string[] }>(
      `with moved as (
         update ${offsets} o set committed_offset = m.committed_offset
         from unnest($3::int[], $4::bigint[], $5::bigint[]) as m(partition, committed_offset, owner_epoch)
         where o.projection = $1 and o.topic = $2 and o.partition = m.partition and o.owner_epoch = m.owner_epoch
         returning o.partition
       ), recorded as (
         insert into ${appliedEvents} (projection, event_id)
         select $1, event_id from unnest($6::text[], $7::int[]) as ids(event_id, partition)
         where ids.partition in (select partition from moved)
         on conflict do nothing returning event_id
       )
       select array(select partition from moved) as moved, array(select event_id from recorded) as recorded`,
      [
        group,
        topic,
        moves.map((move) => move.partition),
        moves.map((move) => move.claim.committedOffset.toString()),
        moves.map((move) => move.claim.epoch),
        moves.flatMap((move) => move.eventIds),
        moves.flatMap((move) => move.eventIds.map(() => move.partition)),
      ],
    );
    const row = rows[0]!;
    return { moved: new Set(row.moved), recorded: new Set(row.recorded) };
  };

  /**
   * Applies batches of distinct partitions in one transaction: each partition's stored offset moves in it, and
   * the events, each partition's in offset order, go to the read model together (a key is in one partition, so
   * its order holds). A failure fails them all.
   */
  const applyTogether = async (batches: readonly DeliveredBatch[]): Promise<void> => {
    const prepared = batches.map((batch) => ({
      partition: batch.partition,
      decoded: batch.messages.map((message) => ({
        message,
        eventId: eventIdOf(message),
        event: decode(message),
      })),
      lastOffset: BigInt(batch.messages[batch.messages.length - 1]!.offset),
      held: claims.get(batch.partition),
    }));
    // Forgotten first: if the transaction fails, the retry claims again and re-reads the stored offset, which
    // is the one to trust when the failure hid whether the commit went through.
    for (const { partition } of prepared) claims.delete(partition);
    const committed = await db.transaction(async (tx) => {
      const moves = [];
      for (const { partition, decoded, lastOffset, held } of prepared) {
        const current = held ?? (await claim(tx, partition));
        const fresh = unapplied(decoded, current.committedOffset);
        const next = lastOffset > current.committedOffset ? lastOffset : current.committedOffset;
        moves.push({ partition, claim: { epoch: current.epoch, committedOffset: next }, fresh });
      }
      const { moved, recorded } = await moveOffsetsAndRecord(
        tx,
        moves.map(({ partition, claim, fresh }) => ({
          partition,
          claim,
          eventIds: fresh.map((entry) => entry.eventId),
        })),
      );
      const stale = moves.find((move) => !moved.has(move.partition));
      if (stale !== undefined) throw new StaleProjectionOwnerError(group, stale.partition, stale.claim.epoch);
      // `recorded` answers each new id once, so an id is applied once even were it in two partitions' batches.
      await applyEvents(
        tx,
        moves.flatMap(({ fresh }) =>
          notSuperseded(fresh.filter((candidate) => recorded.delete(candidate.eventId))),
        ),
      );
      return moves;
    });
    for (const { partition, claim } of committed) claims.set(partition, claim);
  };

  /**
   * Batches handed over while a transaction is running wait for it and then go in the next one together: a log
   * that hands a member's partitions over at the same moment (the embedded log and NATS start them on shared
   * rounds) costs one transaction for several partitions instead of one each. When such a transaction fails,
   * each of its batches is tried alone, so one failing batch holds back only its own partition.
   */
  interface Waiting {
    readonly batch: DeliveredBatch;
    /** Runs a function in the context the batch was handed over in (its trace). */
    readonly inContext: <R>(fn: () => R) => R;
    readonly resolve: () => void;
    readonly reject: (error: unknown) => void;
  }
  let waiting: Waiting[] = [];
  let applying = false;
  /** Partitions whose last batch failed: the next goes alone, so it does not fail the others' transaction again. */
  const failing = new Set<number>();
  /**
   * Applies the batches in one transaction, in the first one's context (the spans join its trace); answers
   * whether it committed. A lone batch's failure is its own: it is rejected (and its partition marked failing).
   */
  const attempt = async (entries: readonly Waiting[]): Promise<boolean> => {
    try {
      await entries[0]!.inContext(() => applyTogether(entries.map((entry) => entry.batch)));
    } catch (error) {
      if (entries.length === 1) {
        failing.add(entries[0]!.batch.partition);
        entries[0]!.reject(error);
      }
      return false;
    }
    for (const entry of entries) {
      failing.delete(entry.batch.partition);
      entry.resolve();
    }
    return true;
  };
  const applyWaiting = async (): Promise<void> => {
    applying = true;
    try {
      while (waiting.length > 0) {
        const taken = waiting;
        waiting = [];
        const together = taken.filter((entry) => !failing.has(entry.batch.partition));
        const alone = taken.filter((entry) => failing.has(entry.batch.partition));
        // When the shared transaction fails, each of its batches is tried alone: only the failing one fails.
        const combinedFailed = together.length > 1 && !(await attempt(together));
        const singles = together.length === 1 || combinedFailed ? [...together, ...alone] : alone;
        for (const entry of singles) await attempt([entry]);
      }
    } finally {
      applying = false;
    }
  };
  const applyBatch = (batch: DeliveredBatch): Promise<void> =>
    new Promise((resolve, reject) => {
      waiting.push({ batch, inContext: AsyncLocalStorage.snapshot(), resolve, reject });
      if (!applying) void applyWaiting();
    });

  /** Deletes the ids older than the dedup window, at most every few minutes, outside any batch. */
  const purgeIfDue = async (): Promise<void> => {
    if (Date.now() - lastPurgeAt < purgeIntervalMs) return;
    lastPurgeAt = Date.now();
    await db.query(
      `delete from ${appliedEvents}
       where projection = $1 and applied_at < now() - $2::bigint * interval '1 millisecond'`,
      [group, dedupWindowMs],
    );
  };

  return options.log.consume({
    topic,
    group,
    from: options.from ?? 'beginning',
    ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
    handler: async (batch) => {
      await applyBatch(batch);
      await options.afterBatch?.(batch);
      await purgeIfDue();
    },
  });
};
