import type { Queryable, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';

/** What the operator is told about a dispute: the buyer's whole report and the order it concerns. */
export interface DisputeNotice {
  readonly orderId: number;
  readonly productId: string;
  readonly productName: string;
  readonly quantity: number;
  readonly totalCents: number;
  readonly currency: string;
  readonly sellerAccountId: number;
  readonly buyerAccountId: number;
  readonly buyerEmail: string;
  readonly reason: string;
  readonly description: string;
  readonly requestedAction?: string | undefined;
  readonly photoUrls: readonly string[];
  readonly reportedAt: number;
}

export interface DueNotice {
  readonly notice: DisputeNotice;
  readonly attempts: number;
}

/**
 * The queue of operator emails about disputes: a row is written in the transaction of the IssueReported event
 * (so no dispute goes unreported, and the request never waits for mail), then sent by the notifier.
 */
export class DisputeNotificationsTable {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.dispute_notifications`;
  }

  async enqueue(tx: Transaction, notice: DisputeNotice, now: number): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.table} (order_id, payload, created_at_ms, next_attempt_at_ms)
       VALUES ($1, $2::jsonb, $3, $3) ON CONFLICT (order_id) DO NOTHING`,
      [notice.orderId, JSON.stringify(notice), now],
    );
  }

  /**
   * Claims the oldest due notice (a row lock held until `tx` ends, skipped by other replicas), or undefined when
   * none is due.
   */
  async claimDue(tx: Transaction, now: number): Promise<DueNotice | undefined> {
    const { rows } = await tx.query<{ payload: DisputeNotice; attempts: number }>(
      `SELECT payload, attempts FROM ${this.table} WHERE sent_at_ms IS NULL AND next_attempt_at_ms <= $1
       ORDER BY next_attempt_at_ms LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [now],
    );
    const row = rows[0];
    return row && { notice: row.payload, attempts: Number(row.attempts) };
  }

  async markSent(tx: Transaction, orderId: number, now: number): Promise<void> {
    await tx.query(`UPDATE ${this.table} SET sent_at_ms = $2, attempts = attempts + 1 WHERE order_id = $1`, [
      orderId,
      now,
    ]);
  }

  async retryLater(tx: Transaction, orderId: number, nextAttemptAt: number): Promise<void> {
    await tx.query(
      `UPDATE ${this.table} SET attempts = attempts + 1, next_attempt_at_ms = $2 WHERE order_id = $1`,
      [orderId, nextAttemptAt],
    );
  }

  async unsentCount(db: Queryable): Promise<number> {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.table} WHERE sent_at_ms IS NULL`,
    );
    return Number(rows[0]?.n ?? 0);
  }
}
