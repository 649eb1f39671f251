import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { SellerWebhook, SellerWebhookEndpoints } from '../application/ports.js';

/**
 * Sellers' webhook endpoints (docs/specification.md, "Seller notifications") and the seller of each order (the
 * order.disputed event names the order only). Deliveries go through the `deliveries` queue, keyed by endpoint id.
 */
export const sellerWebhooksMigration: Migration = {
  id: 'subscription-002-seller-webhooks',
  sql: (schema) => `
    CREATE TABLE ${schema}.seller_webhooks (
      endpoint_id text PRIMARY KEY,
      seller_account_id bigint NOT NULL,
      url text NOT NULL,
      created_at_ms bigint NOT NULL,
      deleted_at_ms bigint
    );
    CREATE INDEX seller_webhooks_live ON ${schema}.seller_webhooks (seller_account_id, created_at_ms)
      WHERE deleted_at_ms IS NULL;
    CREATE TABLE ${schema}.seller_orders (
      order_id bigint PRIMARY KEY,
      seller_account_id bigint NOT NULL
    );
  `,
};

export class SellerWebhooksTable implements SellerWebhookEndpoints {
  private readonly table: string;
  private readonly orders: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.seller_webhooks`;
    this.orders = `${quoteIdent(schema)}.seller_orders`;
  }

  async insert(db: Queryable, webhook: SellerWebhook): Promise<void> {
    await db.query(
      `INSERT INTO ${this.table} (endpoint_id, seller_account_id, url, created_at_ms) VALUES ($1, $2, $3, $4)`,
      [webhook.endpointId, webhook.sellerAccountId, webhook.url, webhook.createdAt],
    );
  }

  /** The seller's live endpoints, oldest first. */
  async live(db: Queryable, sellerAccountId: number): Promise<SellerWebhook[]> {
    const { rows } = await db.query<{ endpoint_id: string; url: string; created_at_ms: string }>(
      `SELECT endpoint_id, url, created_at_ms FROM ${this.table}
        WHERE seller_account_id = $1 AND deleted_at_ms IS NULL ORDER BY created_at_ms, endpoint_id`,
      [sellerAccountId],
    );
    return rows.map((row) => ({
      endpointId: row.endpoint_id,
      sellerAccountId,
      url: row.url,
      createdAt: Number(row.created_at_ms),
    }));
  }

  /** Whether a live endpoint of this seller was removed. */
  async remove(db: Queryable, sellerAccountId: number, endpointId: string, now: number): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE ${this.table} SET deleted_at_ms = $3
        WHERE endpoint_id = $1 AND seller_account_id = $2 AND deleted_at_ms IS NULL`,
      [endpointId, sellerAccountId, now],
    );
    return rowCount > 0;
  }

  async recordOrder(db: Queryable, orderId: number, sellerAccountId: number): Promise<void> {
    await db.query(
      `INSERT INTO ${this.orders} (order_id, seller_account_id) VALUES ($1, $2) ON CONFLICT (order_id) DO NOTHING`,
      [orderId, sellerAccountId],
    );
  }

  async sellerOfOrder(db: Queryable, orderId: number): Promise<number | undefined> {
    const { rows } = await db.query<{ seller_account_id: string }>(
      `SELECT seller_account_id FROM ${this.orders} WHERE order_id = $1`,
      [orderId],
    );
    return rows[0] && Number(rows[0].seller_account_id);
  }
}
