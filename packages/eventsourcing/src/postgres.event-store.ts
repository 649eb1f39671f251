import {
  PG_UNIQUE_VIOLATION,
  quoteIdent,
  sqlStateOf,
  type Database,
  type Queryable,
} from '@marketplace/database';
import { newEventId } from '@marketplace/platform';
import { assertValidAppend } from './append-request.validation.js';
import type { DomainEvent } from './decider.js';
import { eventsAppended } from './events-appended.js';
import { EVENT_COLUMNS, toRecordedEvent, type EventRow } from './events-table.js';
import {
  WrongExpectedVersionError,
  type AppendRequest,
  type CompanionWrite,
  type CompanionWrites,
  type EventMetadata,
  type EventStore,
  type MultiStreamAppendRequest,
  type RecordedEvent,
  type StreamAppend,
} from './event-store.port.js';

export interface PostgresEventStoreOptions {
  readonly db: Database;
  /** The schema `eventStoreMigrations` were applied to. */
  readonly schema: string;
}

/** Appends with expected version `any` retry this often when a concurrent append takes their version. */
const ANY_VERSION_ATTEMPTS = 5;

/**
 * What an append's statement returns: only what the database decides. The rest of each recorded event is the
 * request's own, so the database does not turn the jsonb it just parsed back into text for the client to parse.
 */
const APPENDED_COLUMNS = 'global_position, version, event_id';

type AppendedRow = {
  readonly global_position: string;
  readonly version: number;
  readonly event_id: string;
};

/** One stream's part of an append as sent: each event's id, made here, and data and metadata as JSON text. */
interface SentStream {
  readonly streamId: string;
  readonly streamType: string;
  readonly metadata: string;
  readonly occurredAt: Date;
  readonly events: readonly { readonly eventId: string; readonly type: string; readonly data: string }[];
}

const sentStreamOf = (append: StreamAppend): SentStream => ({
  streamId: append.streamId,
  streamType: append.streamType,
  metadata: JSON.stringify(append.metadata),
  occurredAt: new Date(append.now),
  events: append.events.map((event) => ({
    eventId: newEventId(),
    type: event.type,
    data: JSON.stringify(event.data),
  })),
});

/**
 * Each stream's recorded events of a complete append, in the order sent (which is version order): the row
 * returned for an event (found by its id) gives its position and version. Data and metadata are parsed from
 * the text sent, so they are what a read returns (undefined properties dropped, dates as strings), not the
 * caller's objects.
 */
const recordedOf = <E extends DomainEvent>(
  sent: readonly SentStream[],
  rows: readonly AppendedRow[],
): RecordedEvent<E>[][] => {
  const decided = new Map(rows.map((row) => [row.event_id, row]));
  return sent.map((stream) =>
    stream.events.map((event) => {
      const row = decided.get(event.eventId)!;
      return {
        eventId: event.eventId,
        streamId: stream.streamId,
        streamType: stream.streamType,
        version: row.version,
        type: event.type,
        data: JSON.parse(event.data) as E['data'],
        metadata: JSON.parse(stream.metadata) as EventMetadata,
        occurredAt: stream.occurredAt.getTime(),
        globalPosition: row.global_position,
      };
    }),
  );
};

/**
 * The append's statement with its companion writes, each a CTE of its own, written only when all `total`
 * events went in. Every CTE sees the same snapshot, so a companion learns of the events only through the CTE's
 * rows.
 */
const withCompanions = (
  insert: string,
  params: readonly unknown[],
  companion: CompanionWrites | undefined,
  total: number,
): { sql: string; params: unknown[] } => {
  const writes: readonly CompanionWrite[] =
    companion === undefined ? [] : 'sql' in companion ? [companion] : companion;
  if (writes.length === 0) return { sql: insert, params: [...params] };
  const whenAppended = `(select count(*) from appended_events) = ${total}`;
  const all: unknown[] = [...params];
  const ctes = writes.map((write, index) => {
    const sql = write.sql({ whenAppended, firstParam: all.length + 1 });
    all.push(...write.params);
    return `companion_${index} as (${sql})`;
  });
  return {
    sql: `with appended_events as (${insert}), ${ctes.join(', ')}
            select ${APPENDED_COLUMNS} from appended_events`,
    params: all,
  };
};

/**
 * The event store on PostgreSQL (a server or the embedded engine). Expected versions are enforced by the
 * database, never by reading first and checking after: the new events take the versions after the expected one
 * and `unique (stream_id, version)` refuses them when another append took those versions first.
 */
export const createPostgresEventStore = ({ db, schema }: PostgresEventStoreOptions): EventStore => {
  const events = `${quoteIdent(schema)}.events`;

  /** The version the new events follow, and the condition the append needs, per kind of expectation. */
  const baseVersionOf = (expected: AppendRequest['expectedVersion']): { base: string; guard: string } => {
    if (expected === 'any') {
      return {
        base: `(select coalesce(max(version), 0) from ${events} where stream_id = $1)`,
        guard: 'true',
      };
    }
    if (expected === 'no_stream' || expected === 0) return { base: '0', guard: 'true' };
    // Versions are never deleted, so once the expected version exists it stays: this check cannot race. A
    // concurrent append at the same version is caught by the unique constraint instead.
    return {
      base: String(expected),
      guard: `exists (select 1 from ${events} where stream_id = $1 and version = ${expected})`,
    };
  };

  const insertStatement = (request: AppendRequest, onConflict: string) => {
    const { base, guard } = baseVersionOf(request.expectedVersion);
    const sent = sentStreamOf(request);
    const insert = `insert into ${events} (stream_id, stream_type, version, event_id, type, data, metadata, occurred_at)
         select $1::text, $2::text, ${base} + appended.ordinality, appended.event_id, appended.type, appended.data,
                $6::jsonb, $7::timestamptz
         from unnest($3::uuid[], $4::text[], $5::jsonb[]) with ordinality
           as appended (event_id, type, data, ordinality)
         where ${guard}
         ${onConflict}
         returning ${APPENDED_COLUMNS}`;
    const params: unknown[] = [
      request.streamId,
      request.streamType,
      sent.events.map((event) => event.eventId),
      sent.events.map((event) => event.type),
      sent.events.map((event) => event.data),
      sent.metadata,
      sent.occurredAt,
    ];
    return { ...withCompanions(insert, params, request.companion, sent.events.length), sent };
  };

  /** Alone, the append is one statement, hence atomic without a transaction of its own. */
  const insertAlone = async <E extends DomainEvent>(
    request: AppendRequest<E>,
  ): Promise<RecordedEvent<E>[]> => {
    const { sql, params, sent } = insertStatement(request, '');
    try {
      const { rows } = await db.query<AppendedRow>(sql, params);
      if (rows.length === 0) throw new WrongExpectedVersionError(request.streamId, request.expectedVersion);
      eventsAppended(schema);
      return recordedOf<E>([sent], rows)[0]!;
    } catch (error) {
      if (sqlStateOf(error) === PG_UNIQUE_VIOLATION) {
        throw new WrongExpectedVersionError(request.streamId, request.expectedVersion);
      }
      throw error;
    }
  };

  /**
   * In the caller's transaction, a conflict must leave that transaction usable (the caller may re-read and
   * retry, or write something else). A unique violation would abort it, and a savepoint around the insert costs
   * two round trips on every append, so the taken versions are skipped (`on conflict do nothing`) instead: fewer
   * rows than events means a conflict, and the rows that did go in (a multi-event append racing a shorter one)
   * are deleted again before the caller hears of it.
   */
  const insertInTransaction = async <E extends DomainEvent>(
    tx: Queryable,
    request: AppendRequest<E>,
  ): Promise<RecordedEvent<E>[]> => {
    const { sql, params, sent } = insertStatement(request, 'on conflict (stream_id, version) do nothing');
    const { rows } = await tx.query<AppendedRow>(sql, params);
    if (rows.length === request.events.length) {
      db.afterCommit(() => eventsAppended(schema));
      return recordedOf<E>([sent], rows)[0]!;
    }
    if (rows.length > 0) {
      await tx.query(`delete from ${events} where event_id = any($1::uuid[])`, [
        rows.map((row) => row.event_id),
      ]);
    }
    throw new WrongExpectedVersionError(request.streamId, request.expectedVersion);
  };

  /**
   * The statement of a multi-stream append: one row per event, its version computed from its stream's
   * expectation (`any`: after the stream's last version, read by the statement), inserted only when every
   * stream expected at a version has that version (one guard for all, so a failed one appends nothing).
   */
  const insertManyStatement = (request: MultiStreamAppendRequest, onConflict: string) => {
    const sent = request.streams.map(sentStreamOf);
    const rows = request.streams.flatMap((stream, streamIndex) => {
      const { events: sentEvents, ...sentStream } = sent[streamIndex]!;
      return sentEvents.map((event, index) => ({
        ...sentStream,
        ...event,
        // -1: after the stream's last version (expected version any).
        base:
          stream.expectedVersion === 'any'
            ? -1
            : stream.expectedVersion === 'no_stream'
              ? 0
              : stream.expectedVersion,
        offset: index + 1,
      }));
    });
    const guarded = request.streams.filter(
      (stream): stream is StreamAppend & { expectedVersion: number } =>
        typeof stream.expectedVersion === 'number' && stream.expectedVersion > 0,
    );
    const insert = `insert into ${events} (stream_id, stream_type, version, event_id, type, data, metadata, occurred_at)
         select a.stream_id, a.stream_type,
                case when a.base < 0
                  then (select coalesce(max(version), 0) from ${events} e where e.stream_id = a.stream_id)
                  else a.base end + a.version_offset,
                a.event_id, a.type, a.data, a.metadata, a.occurred_at
         from unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::uuid[], $6::text[], $7::jsonb[],
                     $8::jsonb[], $9::timestamptz[]) with ordinality
           as a (stream_id, stream_type, base, version_offset, event_id, type, data, metadata, occurred_at, n)
         where not exists (
           select 1 from unnest($10::text[], $11::int[]) as g (stream_id, version)
            where not exists (select 1 from ${events} e where e.stream_id = g.stream_id and e.version = g.version))
         order by a.n
         ${onConflict}
         returning ${APPENDED_COLUMNS}`;
    const params: unknown[] = [
      rows.map((row) => row.streamId),
      rows.map((row) => row.streamType),
      rows.map((row) => row.base),
      rows.map((row) => row.offset),
      rows.map((row) => row.eventId),
      rows.map((row) => row.type),
      rows.map((row) => row.data),
      rows.map((row) => row.metadata),
      rows.map((row) => row.occurredAt),
      guarded.map((stream) => stream.streamId),
      guarded.map((stream) => stream.expectedVersion),
    ];
    return { ...withCompanions(insert, params, request.companion, rows.length), total: rows.length, sent };
  };

  /**
   * After a refused multi-stream append (nothing of it in the table): the first stream whose expectation does
   * not hold now, to name in the error; the first stream when a concurrent writer's append is not visible.
   */
  const streamOffExpectation = async (
    q: Queryable,
    streams: readonly StreamAppend[],
  ): Promise<StreamAppend> => {
    const { rows } = await q.query<{ stream_id: string; version: number }>(
      `select stream_id, max(version)::int as version from ${events} where stream_id = any($1::text[])
        group by stream_id`,
      [streams.map((stream) => stream.streamId)],
    );
    const versions = new Map(rows.map((row) => [row.stream_id, row.version]));
    const holds = ({ streamId, expectedVersion }: StreamAppend): boolean => {
      const version = versions.get(streamId) ?? 0;
      if (expectedVersion === 'any') return true;
      return expectedVersion === 'no_stream' ? version === 0 : version === expectedVersion;
    };
    return streams.find((stream) => !holds(stream)) ?? (streams[0] as StreamAppend);
  };

  const conflictOf = (stream: StreamAppend) =>
    new WrongExpectedVersionError(stream.streamId, stream.expectedVersion);

  /** Alone: one statement, atomic without a transaction; a taken version fails the whole statement. */
  const insertManyAlone = async <E extends DomainEvent>(
    request: MultiStreamAppendRequest<E>,
  ): Promise<RecordedEvent<E>[][]> => {
    const { sql, params, total, sent } = insertManyStatement(request, '');
    let rows: AppendedRow[];
    try {
      ({ rows } = await db.query<AppendedRow>(sql, params));
    } catch (error) {
      if (sqlStateOf(error) !== PG_UNIQUE_VIOLATION) throw error;
      throw conflictOf(await streamOffExpectation(db, request.streams));
    }
    if (rows.length !== total) throw conflictOf(await streamOffExpectation(db, request.streams));
    eventsAppended(schema);
    return recordedOf<E>(sent, rows);
  };

  /** In the caller's transaction: taken versions are skipped and what went in is deleted again (see above). */
  const insertManyInTransaction = async <E extends DomainEvent>(
    tx: Queryable,
    request: MultiStreamAppendRequest<E>,
  ): Promise<RecordedEvent<E>[][]> => {
    const { sql, params, total, sent } = insertManyStatement(
      request,
      'on conflict (stream_id, version) do nothing',
    );
    const { rows } = await tx.query<AppendedRow>(sql, params);
    if (rows.length === total) {
      db.afterCommit(() => eventsAppended(schema));
      return recordedOf<E>(sent, rows);
    }
    if (rows.length > 0) {
      await tx.query(`delete from ${events} where event_id = any($1::uuid[])`, [
        rows.map((row) => row.event_id),
      ]);
    }
    throw conflictOf(await streamOffExpectation(tx, request.streams));
  };

  return {
    async readStream<E extends DomainEvent>(streamId: string, tx?: Queryable) {
      const { rows } = await (tx ?? db).query<EventRow>(
        `select ${EVENT_COLUMNS} from ${events} where stream_id = $1 order by version`,
        [streamId],
      );
      return { version: rows.at(-1)?.version ?? 0, events: rows.map((row) => toRecordedEvent<E>(row)) };
    },

    async append<E extends DomainEvent>(request: AppendRequest<E>, tx?: Queryable) {
      assertValidAppend(request);
      if (request.events.length === 0) return [];
      const attempts = request.expectedVersion === 'any' ? ANY_VERSION_ATTEMPTS : 1;
      for (let attempt = 1; ; attempt++) {
        try {
          return tx ? await insertInTransaction(tx, request) : await insertAlone(request);
        } catch (error) {
          if (!(error instanceof WrongExpectedVersionError) || attempt >= attempts) throw error;
        }
      }
    },

    async appendMany<E extends DomainEvent>(request: MultiStreamAppendRequest<E>, tx?: Queryable) {
      const seen = new Set<string>();
      for (const stream of request.streams) {
        assertValidAppend(stream);
        if (seen.has(stream.streamId)) {
          throw new TypeError(`stream ${stream.streamId} appears twice in one multi-stream append`);
        }
        seen.add(stream.streamId);
      }
      const appending = request.streams.filter((stream) => stream.events.length > 0);
      if (appending.length === 0) return request.streams.map(() => []);
      const appended = { ...request, streams: appending };
      const attempts = appending.some((stream) => stream.expectedVersion === 'any')
        ? ANY_VERSION_ATTEMPTS
        : 1;
      for (let attempt = 1; ; attempt++) {
        try {
          const recordedOf = new Map<string, RecordedEvent<E>[]>();
          const results = tx ? await insertManyInTransaction(tx, appended) : await insertManyAlone(appended);
          appending.forEach((stream, index) => recordedOf.set(stream.streamId, results[index] ?? []));
          return request.streams.map((stream) => recordedOf.get(stream.streamId) ?? []);
        } catch (error) {
          if (!(error instanceof WrongExpectedVersionError) || attempt >= attempts) throw error;
        }
      }
    },
  };
};
