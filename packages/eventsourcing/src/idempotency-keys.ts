import type { Database, Migration, Queryable, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { AppError, Clock } from '@marketplace/platform';
import type { IdempotentRequest } from './idempotency.js';
import { IDEMPOTENCY_KEY_RETENTION_MS, idempotencyConflict } from './idempotency.js';

/**
 * `<schema>.idempotency_keys`: one row per (scope, key) that created something, written in the transaction
 * that appended the created stream's first events, so the key and the resource commit or vanish together.
 */
export const idempotencyKeysMigration: Migration = {
  id: 'eventsourcing-idempotency-001-keys',
  sql: (schema) => `
    create table ${schema}.idempotency_keys (
      scope text not null,
      key text not null,
      request_hash text not null,
      -- The stream the first request created (product_42, quote_7, checkout_<uuid>).
      stream_id text not null,
      created_at timestamptz not null,
      -- Two transactions recording one key: the second waits for the first and then sees its row.
      primary key (scope, key)
    );
    create index idempotency_keys_created_at on ${schema}.idempotency_keys (created_at);
  `,
};

/** Called by a create, inside its transaction, once it knows the stream it creates and before it appends. */
export type RecordIdempotencyKey = (tx: Transaction, streamId: string) => Promise<void>;

export interface CreateOnceSteps<T> {
  /**
   * Creates the resource. `recordKey` is undefined when the request has no key; otherwise it must be called in
   * the transaction that appends the new stream's events.
   */
  readonly create: (recordKey: RecordIdempotencyKey | undefined) => Promise<T>;
  /** The answer for a key that already created `streamId`: the resource as it is now. */
  readonly replay: (streamId: string) => Promise<T>;
}

/** Thrown through the create's transaction (rolling it back) when another request recorded the key first. */
class KeyRecordedFirst extends Error {
  constructor(readonly streamId: string) {
    super(`the idempotency key already created ${streamId}`);
    this.name = 'KeyRecordedFirst';
  }
}

/**
 * Thrown by `recordMany` when concurrent requests recorded some of the batch's keys first: the caller's
 * transaction must roll back (its creates are duplicates of theirs), and `findMany` then finds those keys.
 */
export class IdempotencyKeysTaken extends Error {
  constructor(readonly keys: readonly string[]) {
    super(`${keys.length} idempotency keys were recorded by another request first`);
    this.name = 'IdempotencyKeysTaken';
  }
}

/** One key of a batch of creates, and the stream it creates. */
export interface IdempotencyKeyEntry {
  readonly request: IdempotentRequest;
  readonly streamId: string;
}

/**
 * The idempotency keys of one service's schema: exactly-once creation at the write. Rows are kept at least
 * IDEMPOTENCY_KEY_RETENTION_MS; `purgeExpired` (a periodic job of each service) deletes older ones.
 */
export class IdempotencyKeys {
  private readonly table: string;

  constructor(
    private readonly db: Database,
    schema: string,
    private readonly clock: Clock,
  ) {
    this.table = `${quoteIdent(schema)}.idempotency_keys`;
  }

  /**
   * Runs a creating command at most once per key: a key seen before answers `replay` of the stream it created
   * (or an idempotency conflict when the request differs) without creating anything. Two requests racing with one
   * key both reach `create`; the unique key makes the second wait for the first's commit, and it then replays.
   * A create that fails records nothing, so the same key may be retried.
   */
  async createOnce<T>(request: IdempotentRequest | undefined, steps: CreateOnceSteps<T>): Promise<T> {
    if (request === undefined) return steps.create(undefined);
    // Checked before creating, so a replay skips the create's slow parts (image fetches, remote calls).
    const earlier = await this.find(this.db, request);
    if (earlier !== undefined) return steps.replay(earlier);
    let recorded = false;
    const recordKey: RecordIdempotencyKey = async (tx, streamId) => {
      await this.record(tx, request, streamId);
      recorded = true;
    };
    try {
      const created = await steps.create(recordKey);
      // A create that forgot its key would make every retry a duplicate: fail the tests loudly.
      if (!recorded) throw new Error(`a create with idempotency key ${request.key} did not record it`);
      return created;
    } catch (error) {
      if (error instanceof KeyRecordedFirst) return steps.replay(error.streamId);
      throw error;
    }
  }

  /** The stream the key created, or undefined; an idempotency conflict when it was for another request. */
  async find(q: Queryable, request: IdempotentRequest): Promise<string | undefined> {
    const { rows } = await q.query<{ request_hash: string; stream_id: string }>(
      `select request_hash, stream_id from ${this.table} where scope = $1 and key = $2`,
      [request.scope, request.key],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    if (row.request_hash !== request.requestHash) throw idempotencyConflict(request.key);
    return row.stream_id;
  }

  /**
   * `find` for a batch of creates (a bulk upsert's items) in one statement: for each request in order, the stream
   * its key created, undefined when unseen, or the idempotency conflict when it was for another request.
   */
  async findMany(
    q: Queryable,
    requests: readonly IdempotentRequest[],
  ): Promise<(string | AppError | undefined)[]> {
    if (requests.length === 0) return [];
    const { rows } = await q.query<{ scope: string; key: string; request_hash: string; stream_id: string }>(
      `select k.scope, k.key, k.request_hash, k.stream_id
         from unnest($1::text[], $2::text[]) as wanted (scope, key)
         join ${this.table} k on k.scope = wanted.scope and k.key = wanted.key`,
      [requests.map((request) => request.scope), requests.map((request) => request.key)],
    );
    const found = new Map(rows.map((row) => [`${row.scope}\n${row.key}`, row]));
    return requests.map((request) => {
      const row = found.get(`${request.scope}\n${request.key}`);
      if (row === undefined) return undefined;
      return row.request_hash === request.requestHash ? row.stream_id : idempotencyConflict(request.key);
    });
  }

  /**
   * Records a batch's keys in the transaction that appends the created streams' first events, in one statement.
   * A key a concurrent request is recording makes this wait for its transaction; if it committed, this throws
   * IdempotencyKeysTaken, and the caller rolls back and looks the keys up again (`findMany`).
   */
  async recordMany(tx: Transaction, entries: readonly IdempotencyKeyEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const { rows } = await tx.query<{ scope: string; key: string }>(
      `insert into ${this.table} (scope, key, request_hash, stream_id, created_at)
       select scope, key, request_hash, stream_id, $5
         from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as entry (scope, key, request_hash, stream_id)
       on conflict (scope, key) do nothing
       returning scope, key`,
      [
        entries.map(({ request }) => request.scope),
        entries.map(({ request }) => request.key),
        entries.map(({ request }) => request.requestHash),
        entries.map(({ streamId }) => streamId),
        new Date(this.clock.now()),
      ],
    );
    if (rows.length === entries.length) return;
    const recorded = new Set(rows.map((row) => `${row.scope}\n${row.key}`));
    throw new IdempotencyKeysTaken(
      entries
        .filter(({ request }) => !recorded.has(`${request.scope}\n${request.key}`))
        .map(({ request }) => request.key),
    );
  }

  /** Deletes the keys recorded more than IDEMPOTENCY_KEY_RETENTION_MS ago; resolves to how many. */
  async purgeExpired(): Promise<number> {
    const before = new Date(this.clock.now() - IDEMPOTENCY_KEY_RETENTION_MS);
    const { rowCount } = await this.db.query(`delete from ${this.table} where created_at < $1`, [before]);
    return rowCount;
  }

  private async record(tx: Transaction, request: IdempotentRequest, streamId: string): Promise<void> {
    // On a concurrent insert of the same key this waits for that transaction: nothing when it rolls back,
    // and no row here when it commits.
    const { rowCount } = await tx.query(
      `insert into ${this.table} (scope, key, request_hash, stream_id, created_at)
       values ($1, $2, $3, $4, $5) on conflict (scope, key) do nothing`,
      [request.scope, request.key, request.requestHash, streamId, new Date(this.clock.now())],
    );
    if (rowCount === 1) return;
    // Read committed: this statement sees the row the other transaction committed.
    const earlier = await this.find(tx, request);
    if (earlier === undefined) throw new Error(`idempotency key of ${streamId} neither recorded nor found`);
    throw new KeyRecordedFirst(earlier);
  }
}
