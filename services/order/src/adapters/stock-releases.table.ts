import type { Migration, Queryable, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { StockRelease, StockReleases } from '../application/ports.js';

/**
 * The stock to put back for cancelled orders (docs/specification.md, "Order lifecycle"): a row is written in the
 * transaction of the OrderCancelled event; the release job claims due rows, calls the listing service's
 * ReleaseStock (idempotent per reservation id) with no transaction open, and marks them released or due again
 * after a backoff.
 */
export const stockReleasesMigration: Migration = {
  id: 'order-005-stock-releases',
  sql: (schema) => `
    CREATE TABLE ${schema}.stock_releases (
      order_id bigint PRIMARY KEY,
      product_id text NOT NULL,
      reservation_id text NOT NULL,
      created_at_ms bigint NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at_ms bigint,
      last_error text,
      released_at_ms bigint
    );
    CREATE INDEX stock_releases_due ON ${schema}.stock_releases (next_attempt_at_ms)
      WHERE released_at_ms IS NULL;
    CREATE INDEX orders_buyer ON ${schema}.orders (buyer_account_id, order_id);
    CREATE INDEX orders_seller ON ${schema}.orders (seller_account_id, order_id);
    CREATE INDEX orders_disputed ON ${schema}.orders (order_id) WHERE issue_reported_at_ms IS NOT NULL;
  `,
};

export class StockReleasesTable implements StockReleases {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.stock_releases`;
  }

  /** Due at once; a second record for the order (a replayed cancellation) changes nothing. */
  async record(
    tx: Transaction,
    release: { orderId: number; productId: string; reservationId: string },
    now: number,
  ): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.table} (order_id, product_id, reservation_id, created_at_ms, next_attempt_at_ms)
       VALUES ($1, $2, $3, $4, $4) ON CONFLICT (order_id) DO NOTHING`,
      [release.orderId, release.productId, release.reservationId, now],
    );
  }

  /** Claims due releases (replicas never claim the same row) for one attempt, pushing them a lease ahead. */
  async claimDue(db: Queryable, now: number, limit: number, leaseMs: number): Promise<StockRelease[]> {
    const { rows } = await db.query<{
      order_id: string;
      product_id: string;
      reservation_id: string;
      attempts: number;
    }>(
      `WITH due AS (
         SELECT order_id FROM ${this.table}
          WHERE released_at_ms IS NULL AND next_attempt_at_ms <= $1
          ORDER BY next_attempt_at_ms LIMIT $2
          FOR UPDATE SKIP LOCKED
       )
       UPDATE ${this.table} r SET attempts = r.attempts + 1, next_attempt_at_ms = $1 + $3
         FROM due WHERE r.order_id = due.order_id
       RETURNING r.order_id, r.product_id, r.reservation_id, r.attempts`,
      [now, limit, leaseMs],
    );
    return rows.map((row) => ({
      orderId: Number(row.order_id),
      productId: row.product_id,
      reservationId: row.reservation_id,
      attempts: Number(row.attempts),
    }));
  }

  async markReleased(db: Queryable, orderId: number, now: number): Promise<void> {
    await db.query(
      `UPDATE ${this.table} SET released_at_ms = $2, next_attempt_at_ms = NULL, last_error = NULL
        WHERE order_id = $1`,
      [orderId, now],
    );
  }

  async retryLater(db: Queryable, orderId: number, error: string, retryAt: number): Promise<void> {
    await db.query(
      `UPDATE ${this.table} SET last_error = $2, next_attempt_at_ms = $3
        WHERE order_id = $1 AND released_at_ms IS NULL`,
      [orderId, error, retryAt],
    );
  }

  async find(db: Queryable, orderId: number): Promise<{ releasedAt?: number; attempts: number } | undefined> {
    const { rows } = await db.query<{ released_at_ms: string | null; attempts: number }>(
      `SELECT released_at_ms, attempts FROM ${this.table} WHERE order_id = $1`,
      [orderId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      attempts: Number(row.attempts),
      ...(row.released_at_ms === null ? {} : { releasedAt: Number(row.released_at_ms) }),
    };
  }
}
