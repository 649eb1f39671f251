import type { Migration, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { DisputeNotices } from '../application/ports.js';
import type { DisputeNotice } from '../domain/order.emails.js';

/**
 * Every dispute's notice for the operator, written in the transaction of the IssueReported event (so no dispute
 * goes unreported, and the request never waits for mail). While the operator's address is known
 * (`ADMIN_EMAIL`), each notice is turned into an email in the outgoing-mail queue in a transaction and marked
 * queued; notices recorded while it was unset wait here until it is set.
 */
export const disputeMailQueueMigration: Migration = {
  id: 'order-004-dispute-mail-queue',
  sql: (schema) => `
    ALTER TABLE ${schema}.dispute_notifications ADD COLUMN mail_queued_at_ms bigint;
    UPDATE ${schema}.dispute_notifications SET mail_queued_at_ms = sent_at_ms WHERE sent_at_ms IS NOT NULL;
    DROP INDEX ${schema}.dispute_notifications_unsent;
    ALTER TABLE ${schema}.dispute_notifications
      DROP COLUMN attempts, DROP COLUMN next_attempt_at_ms, DROP COLUMN sent_at_ms;
    CREATE INDEX dispute_notifications_unqueued ON ${schema}.dispute_notifications (created_at_ms)
      WHERE mail_queued_at_ms IS NULL;
  `,
};

export class DisputeNotificationsTable implements DisputeNotices {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.dispute_notifications`;
  }

  async record(tx: Transaction, notice: DisputeNotice, now: number): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.table} (order_id, payload, created_at_ms) VALUES ($1, $2::jsonb, $3)
       ON CONFLICT (order_id) DO NOTHING`,
      [notice.orderId, JSON.stringify(notice), now],
    );
  }

  /**
   * Up to `limit` notices whose email is not queued yet, oldest first, locked until `tx` ends (another
   * transaction queueing them skips them).
   */
  async unqueued(tx: Transaction, limit: number): Promise<DisputeNotice[]> {
    const { rows } = await tx.query<{ payload: DisputeNotice }>(
      `SELECT payload FROM ${this.table} WHERE mail_queued_at_ms IS NULL
        ORDER BY created_at_ms LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    return rows.map((row) => row.payload);
  }

  async markQueued(tx: Transaction, orderIds: readonly number[], now: number): Promise<void> {
    await tx.query(`UPDATE ${this.table} SET mail_queued_at_ms = $2 WHERE order_id = ANY($1::bigint[])`, [
      orderIds,
      now,
    ]);
  }
}
