import type { Database, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { IDEMPOTENCY_KEY_RETENTION_MS } from '@marketplace/eventsourcing';
import type { BulkUpsertMode } from '@marketplace/vocabulary';
import type { ImportFormat, RowError } from '../imports/import-file.js';
import type {
  ClaimedImport,
  ImportChunk,
  ImportRowResult,
  ImportStatus,
  ImportView,
  ListingImportStore,
  UploadedImport,
} from '../imports/import.ports.js';

interface ImportRecord extends Record<string, unknown> {
  id: string;
  mode: BulkUpsertMode;
  format: ImportFormat;
  status: ImportStatus;
  rows_total: number;
  rows_processed: number;
  failure: string | null;
  created_at: Date;
  finished_at: Date | null;
}

/** The imports and their rows in PostgreSQL (adapters/listing-imports.migrations.ts). */
export class ListingImportsTable implements ListingImportStore {
  private readonly schema: string;

  constructor(
    private readonly db: Database,
    schema: string,
  ) {
    this.schema = quoteIdent(schema);
  }

  async create(input: Parameters<ListingImportStore['create']>[0]): Promise<UploadedImport> {
    const refused = input.rows.filter((row) => 'errors' in row).length;
    const rows = input.rows.map((row) =>
      'errors' in row
        ? { row_number: row.row, body: null, status: 'error', errors: row.errors }
        : { row_number: row.row, body: row.body, status: null, errors: [] },
    );
    const { idempotency } = input;
    return this.db.transaction(async (tx) => {
      // On a racing upload's insert of the same key this waits for its transaction: when it commits, no row
      // is inserted here and the next statement (read committed) finds that upload's import. If the hourly
      // purge forgot that key in between, the key is free again and the second insert takes it.
      for (let attempt = 1; ; attempt++) {
        const inserted = await tx.query(
          `INSERT INTO ${this.schema}.imports
             (id, seller_account_id, mode, format, status, rows_total, rows_processed, created_at,
              idempotency_key, request_hash)
           VALUES ($1, $2, $3, $4, 'queued', $5, $6, now(), $7, $8)
           ON CONFLICT (seller_account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
          [
            input.id,
            input.sellerAccountId,
            input.mode,
            input.format,
            input.rows.length,
            refused,
            idempotency?.key ?? null,
            idempotency?.requestHash ?? null,
          ],
        );
        if (inserted.rowCount === 1 || idempotency === undefined) break;
        const earlier = await this.keyed(tx, input.sellerAccountId, idempotency.key);
        if (earlier !== undefined) return earlier;
        if (attempt === 2) throw new Error(`import key of ${input.id} neither recorded nor found`);
      }
      // One statement for every row: 10,000 rows are one round trip, not 10,000.
      await tx.query(
        `INSERT INTO ${this.schema}.import_rows (import_id, row_number, body, status, errors)
         SELECT $1, r.row_number, r.body, r.status, r.errors
           FROM jsonb_to_recordset($2::jsonb)
             AS r(row_number integer, body jsonb, status text, errors jsonb)`,
        [input.id, JSON.stringify(rows)],
      );
      return { id: input.id, rowsTotal: input.rows.length, requestHash: idempotency?.requestHash };
    });
  }

  findByKey(sellerAccountId: number, key: string): Promise<UploadedImport | undefined> {
    return this.keyed(this.db, sellerAccountId, key);
  }

  async purgeExpiredKeys(): Promise<number> {
    // The import stays; only its key is forgotten, so the same key uploads anew (docs/idempotency.md).
    const { rowCount } = await this.db.query(
      `UPDATE ${this.schema}.imports SET idempotency_key = NULL, request_hash = NULL
        WHERE idempotency_key IS NOT NULL AND created_at < now() - $1 * interval '1 millisecond'`,
      [IDEMPOTENCY_KEY_RETENTION_MS],
    );
    return rowCount;
  }

  private async keyed(
    q: Queryable,
    sellerAccountId: number,
    key: string,
  ): Promise<UploadedImport | undefined> {
    const { rows } = await q.query<{ id: string; rows_total: number; request_hash: string }>(
      `SELECT id, rows_total, request_hash FROM ${this.schema}.imports
        WHERE seller_account_id = $1 AND idempotency_key = $2`,
      [sellerAccountId, key],
    );
    const [found] = rows;
    return found && { id: found.id, rowsTotal: found.rows_total, requestHash: found.request_hash };
  }

  async find(sellerAccountId: number, id: string): Promise<ImportView | undefined> {
    const { rows } = await this.db.query<ImportRecord>(
      `SELECT id, mode, format, status, rows_total, rows_processed, failure, created_at, finished_at
         FROM ${this.schema}.imports WHERE id = $1 AND seller_account_id = $2`,
      [id, sellerAccountId],
    );
    const [found] = rows;
    if (found === undefined) return undefined;
    const results = await this.db.query<{
      row_number: number;
      status: ImportRowResult['status'];
      product_id: string | null;
      errors: RowError[];
    }>(
      `SELECT row_number, status, product_id, errors FROM ${this.schema}.import_rows
        WHERE import_id = $1 AND status IS NOT NULL ORDER BY row_number`,
      [id],
    );
    return {
      id: found.id,
      mode: found.mode,
      format: found.format,
      status: found.status,
      rowsTotal: found.rows_total,
      rowsProcessed: found.rows_processed,
      failure: found.failure ?? undefined,
      createdAtMs: found.created_at.getTime(),
      finishedAtMs: found.finished_at?.getTime(),
      results: results.rows.map((row) => ({
        row: row.row_number,
        status: row.status,
        productId: row.product_id ?? undefined,
        errors: row.errors,
      })),
    };
  }

  async claim(leaseMs: number): Promise<ClaimedImport | undefined> {
    // SKIP LOCKED: gateway replicas claim different imports and never wait on each other.
    const { rows } = await this.db.query<{ id: string; seller_account_id: string; mode: BulkUpsertMode }>(
      `UPDATE ${this.schema}.imports SET status = 'running', lease_until = now() + $1 * interval '1 millisecond'
        WHERE id = (
          SELECT id FROM ${this.schema}.imports
           WHERE status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < now())
           ORDER BY coalesce(turn_at, created_at) LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id, seller_account_id, mode`,
      [leaseMs],
    );
    const [claimed] = rows;
    return claimed === undefined
      ? undefined
      : { id: claimed.id, sellerAccountId: Number(claimed.seller_account_id), mode: claimed.mode };
  }

  async nextChunk(id: string, rows: number): Promise<ImportChunk | undefined> {
    type ChunkRow = { row_number: number; chunk: number; body: Record<string, unknown> };
    const chunkOf = (found: readonly ChunkRow[]): ImportChunk | undefined => {
      const sorted = [...found].sort((a, b) => a.row_number - b.row_number);
      const [first] = sorted;
      return first === undefined
        ? undefined
        : { chunk: first.chunk, rows: sorted.map((row) => ({ row: row.row_number, body: row.body })) };
    };
    // A chunk planned before and not applied (a crash or a failed call between) goes again as it was, under
    // the same idempotency key.
    const planned = await this.db.query<ChunkRow>(
      `SELECT row_number, chunk, body FROM ${this.schema}.import_rows
        WHERE import_id = $1 AND status IS NULL AND chunk = (
          SELECT min(chunk) FROM ${this.schema}.import_rows
           WHERE import_id = $1 AND status IS NULL AND chunk IS NOT NULL)`,
      [id],
    );
    if (planned.rows.length > 0) return chunkOf(planned.rows);
    // Otherwise the next rows in file order become a chunk, numbered by its first row: unique in the import.
    const fresh = await this.db.query<ChunkRow>(
      `WITH next AS (
         SELECT row_number FROM ${this.schema}.import_rows
          WHERE import_id = $1 AND status IS NULL AND chunk IS NULL
          ORDER BY row_number LIMIT $2)
       UPDATE ${this.schema}.import_rows r SET chunk = (SELECT min(row_number) FROM next)
        FROM next WHERE r.import_id = $1 AND r.row_number = next.row_number
        RETURNING r.row_number, r.chunk, r.body`,
      [id, rows],
    );
    return chunkOf(fresh.rows);
  }

  async recordChunk(id: string, results: readonly ImportRowResult[], leaseMs: number): Promise<void> {
    const rows = results.map((result) => ({
      row_number: result.row,
      status: result.status,
      product_id: result.productId ?? null,
      errors: result.errors,
    }));
    await this.db.transaction(async (tx) => {
      const updated = await tx.query(
        `UPDATE ${this.schema}.import_rows AS target
            SET status = r.status, product_id = r.product_id, errors = r.errors
           FROM jsonb_to_recordset($2::jsonb) AS r(row_number integer, status text, product_id text, errors jsonb)
          WHERE target.import_id = $1 AND target.row_number = r.row_number AND target.status IS NULL`,
        [id, JSON.stringify(rows)],
      );
      await tx.query(
        `UPDATE ${this.schema}.imports
            SET rows_processed = rows_processed + $2, attempts = 0,
                lease_until = now() + $3 * interval '1 millisecond'
          WHERE id = $1`,
        [id, updated.rowCount, leaseMs],
      );
    });
  }

  async finish(id: string, failure?: string): Promise<void> {
    await this.db.query(
      `UPDATE ${this.schema}.imports SET status = $2, failure = $3, finished_at = now(), lease_until = NULL
        WHERE id = $1`,
      [id, failure === undefined ? 'done' : 'failed', failure ?? null],
    );
  }

  async endTurn(id: string): Promise<void> {
    await this.db.query(
      `UPDATE ${this.schema}.imports SET lease_until = NULL, turn_at = now() WHERE id = $1 AND status = 'running'`,
      [id],
    );
  }

  async release(id: string, delayMs: number): Promise<number> {
    const { rows } = await this.db.query<{ attempts: number }>(
      `UPDATE ${this.schema}.imports
          SET attempts = attempts + 1, lease_until = now() + $2 * interval '1 millisecond'
        WHERE id = $1 RETURNING attempts`,
      [id, delayMs],
    );
    return rows[0]?.attempts ?? 0;
  }
}
