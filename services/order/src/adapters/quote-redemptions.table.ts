import type { Queryable, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { QuoteRedemption, QuoteRedemptions } from '../application/ports.js';

export const quoteRedemptionsMigration = {
  id: 'order-003-quote-redemptions',
  sql: (schema: string) => `
    CREATE TABLE ${schema}.quote_redemptions (
      quote_request_id bigint PRIMARY KEY,
      checkout_id text NOT NULL,
      order_id bigint,
      held_at_ms bigint NOT NULL
    );
    CREATE INDEX quote_redemptions_checkout ON ${schema}.quote_redemptions (checkout_id);
  `,
};

/**
 * One row per quote whose agreed price a checkout holds or used: the primary key makes the use single, so of two
 * checkouts racing on one quote exactly one holds it.
 */
export class QuoteRedemptionsTable implements QuoteRedemptions {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.quote_redemptions`;
  }

  async find(db: Queryable, quoteRequestIds: readonly number[]): Promise<QuoteRedemption[]> {
    if (quoteRequestIds.length === 0) return [];
    const { rows } = await db.query<{
      quote_request_id: string;
      checkout_id: string;
      order_id: string | null;
    }>(
      `SELECT quote_request_id, checkout_id, order_id FROM ${this.table} WHERE quote_request_id = ANY($1::bigint[])`,
      [quoteRequestIds],
    );
    return rows.map((row) => ({
      quoteRequestId: Number(row.quote_request_id),
      checkoutId: row.checkout_id,
      orderId: row.order_id === null ? undefined : Number(row.order_id),
    }));
  }

  async hold(
    tx: Transaction,
    checkoutId: string,
    quoteRequestIds: readonly number[],
    now: number,
  ): Promise<QuoteRedemption[]> {
    if (quoteRequestIds.length === 0) return [];
    // A row already held by this checkout (a re-run of its attempt) stays as it is.
    await tx.query(
      `INSERT INTO ${this.table} (quote_request_id, checkout_id, held_at_ms)
       SELECT id, $2, $3 FROM unnest($1::bigint[]) AS id
       ON CONFLICT (quote_request_id) DO NOTHING`,
      [quoteRequestIds, checkoutId, now],
    );
    return (await this.find(tx, quoteRequestIds)).filter((row) => row.checkoutId !== checkoutId);
  }

  async release(tx: Transaction, checkoutId: string): Promise<void> {
    await tx.query(`DELETE FROM ${this.table} WHERE checkout_id = $1 AND order_id IS NULL`, [checkoutId]);
  }

  async redeem(tx: Transaction, checkoutId: string, quoteRequestId: number, orderId: number): Promise<void> {
    const { rowCount } = await tx.query(
      `UPDATE ${this.table} SET order_id = $3 WHERE quote_request_id = $1 AND checkout_id = $2`,
      [quoteRequestId, checkoutId, orderId],
    );
    if (rowCount !== 1)
      throw new Error(`checkout ${checkoutId} places an order on quote ${quoteRequestId} it does not hold`);
  }
}
