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
  type EventStore,
  type RecordedEvent,
} from './event-store.port.js';

export interface PostgresEventStoreOptions {
  readonly db: Database;
  /** The schema `eventStoreMigrations` were applied to. */
  readonly schema: string;
}

/** Appends with expected version `any` retry this often when a concurrent append takes their version. */
const ANY_VERSION_ATTEMPTS = 5;

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
    const insert = `insert into ${events} (stream_id, stream_type, version, event_id, type, data, metadata, occurred_at)
         select $1::text, $2::text, ${base} + appended.ordinality, appended.event_id, appended.type, appended.data,
                $6::jsonb, $7::timestamptz
         from unnest($3::uuid[], $4::text[], $5::jsonb[]) with ordinality
           as appended (event_id, type, data, ordinality)
         where ${guard}
         ${onConflict}
         returning ${EVENT_COLUMNS}`;
    const params: unknown[] = [
      request.streamId,
      request.streamType,
      request.events.map(() => newEventId()),
      request.events.map((event) => event.type),
      request.events.map((event) => JSON.stringify(event.data)),
      JSON.stringify(request.metadata),
      new Date(request.now),
    ];
    const { companion } = request;
    if (companion === undefined) return { sql: insert, params };
    // Every CTE sees the same snapshot, so the companion learns of the events only through the CTE's rows.
    const companionSql = companion.sql({
      whenAppended: `(select count(*) from appended_events) = ${request.events.length}`,
      firstParam: params.length + 1,
    });
    return {
      sql: `with appended_events as (${insert}), companion as (${companionSql})
            select ${EVENT_COLUMNS} from appended_events`,
      params: [...params, ...companion.params],
    };
  };

  const recorded = <E extends DomainEvent>(rows: EventRow[]): RecordedEvent<E>[] =>
    rows.map((row) => toRecordedEvent<E>(row)).sort((a, b) => a.version - b.version);

  /** Alone, the append is one statement, hence atomic without a transaction of its own. */
  const insertAlone = async <E extends DomainEvent>(
    request: AppendRequest<E>,
  ): Promise<RecordedEvent<E>[]> => {
    const { sql, params } = insertStatement(request, '');
    try {
      const { rows } = await db.query<EventRow>(sql, params);
      if (rows.length === 0) throw new WrongExpectedVersionError(request.streamId, request.expectedVersion);
      eventsAppended(schema);
      return recorded(rows);
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
    const { sql, params } = insertStatement(request, 'on conflict (stream_id, version) do nothing');
    const { rows } = await tx.query<EventRow>(sql, params);
    if (rows.length === request.events.length) {
      db.afterCommit(() => eventsAppended(schema));
      return recorded(rows);
    }
    if (rows.length > 0) {
      await tx.query(`delete from ${events} where event_id = any($1::uuid[])`, [
        rows.map((row) => row.event_id),
      ]);
    }
    throw new WrongExpectedVersionError(request.streamId, request.expectedVersion);
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
  };
};
