import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { IdempotentRequest } from '@marketplace/eventsourcing';
import { IDEMPOTENCY_KEY_RETENTION_MS, idempotencyConflict } from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import type { BulkUpsertOutcome } from '../domain/bulk-upsert.js';
import type { BulkUpsertAnswers } from '../application/bulk-upsert.js';

/**
 * The answers of bulk upserts sent with an idempotency key (docs/idempotency.md): a replay answers exactly what
 * the first call did, item by item. Kept as long as the keys of single creates.
 */
export const bulkUpsertAnswersMigration: Migration = {
  id: 'listing-009-bulk-upsert-answers',
  sql: (schema) => `
    CREATE TABLE ${schema}.bulk_upsert_answers (
      scope text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      outcomes jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (scope, key)
    );
    CREATE INDEX bulk_upsert_answers_created_at ON ${schema}.bulk_upsert_answers (created_at);
  `,
};

export class BulkUpsertAnswersTable implements BulkUpsertAnswers {
  private readonly table: string;

  constructor(
    schema: string,
    private readonly clock: Clock,
  ) {
    this.table = `${quoteIdent(schema)}.bulk_upsert_answers`;
  }

  async find(q: Queryable, request: IdempotentRequest): Promise<BulkUpsertOutcome[] | undefined> {
    const { rows } = await q.query<{ request_hash: string; outcomes: BulkUpsertOutcome[] }>(
      `SELECT request_hash, outcomes FROM ${this.table} WHERE scope = $1 AND key = $2`,
      [request.scope, request.key],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    if (row.request_hash !== request.requestHash) throw idempotencyConflict(request.key);
    return row.outcomes;
  }

  async record(
    q: Queryable,
    request: IdempotentRequest,
    outcomes: readonly BulkUpsertOutcome[],
  ): Promise<BulkUpsertOutcome[]> {
    const { rowCount } = await q.query(
      `INSERT INTO ${this.table} (scope, key, request_hash, outcomes, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (scope, key) DO NOTHING`,
      [request.scope, request.key, request.requestHash, JSON.stringify(outcomes), new Date(this.clock.now())],
    );
    if (rowCount === 1) return [...outcomes];
    // A twin of this call finished first: both answer what it recorded.
    const earlier = await this.find(q, request);
    if (earlier === undefined)
      throw new Error(`bulk upsert answer for key ${request.key} neither recorded nor found`);
    return earlier;
  }

  async purgeExpired(q: Queryable): Promise<number> {
    const before = new Date(this.clock.now() - IDEMPOTENCY_KEY_RETENTION_MS);
    const { rowCount } = await q.query(`DELETE FROM ${this.table} WHERE created_at < $1`, [before]);
    return rowCount;
  }
}
