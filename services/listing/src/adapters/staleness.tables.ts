import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { SellerContactsTable } from '@marketplace/seller-contacts';
import type { DueReminder, StalenessReminders } from '../application/staleness.js';

/**
 * What the staleness job reads and writes, in the listing schema:
 * - `seller_contacts`: email and name of each seller, projected from `marketplace.account.v1`;
 * - `listing_confirmations`: each listing's last availability confirmation, projected from the listing events
 *   (state-carrying, so the newest version wins whatever order they arrive in);
 * - `staleness_reminders`: one row per stale period (product, confirmation it started from), written in the
 *   transaction that queues its email (`stalenessMailQueueMigration`): the unique key is what makes the reminder
 *   once per period across replicas and restarts.
 */
export const stalenessMigration: Migration = {
  id: 'listing-003-staleness',
  sql: (schema) => `
    CREATE TABLE ${schema}.seller_contacts (
      account_id bigint PRIMARY KEY,
      name text NOT NULL,
      email text NOT NULL
    );
    CREATE TABLE ${schema}.listing_confirmations (
      product_id text PRIMARY KEY,
      seller_account_id bigint NOT NULL,
      name text NOT NULL,
      confirmed_at_ms bigint NOT NULL,
      version bigint NOT NULL
    );
    CREATE INDEX listing_confirmations_confirmed_at ON ${schema}.listing_confirmations (confirmed_at_ms);
    CREATE TABLE ${schema}.staleness_reminders (
      product_id text NOT NULL,
      confirmed_at_ms bigint NOT NULL,
      claimed_at_ms bigint NOT NULL,
      sent_at_ms bigint,
      PRIMARY KEY (product_id, confirmed_at_ms)
    );
  `,
};

/**
 * The reminders go through the outgoing-mail queue: a period's row now means its email is queued. Rows claimed
 * but never marked sent by the earlier claim-send-mark job are removed, so the next pass queues them.
 */
export const stalenessMailQueueMigration: Migration = {
  id: 'listing-006-staleness-mail-queue',
  sql: (schema) => `
    DELETE FROM ${schema}.staleness_reminders WHERE sent_at_ms IS NULL;
    ALTER TABLE ${schema}.staleness_reminders DROP COLUMN sent_at_ms;
    ALTER TABLE ${schema}.staleness_reminders RENAME COLUMN claimed_at_ms TO queued_at_ms;
  `,
};

export class StalenessTables implements StalenessReminders {
  /** Written by the shared seller-contacts projection (`@marketplace/seller-contacts`); joined by `due`. */
  readonly sellerContacts: SellerContactsTable;
  private readonly confirmations: string;
  private readonly reminders: string;

  constructor(schema: string) {
    const quoted = quoteIdent(schema);
    this.sellerContacts = new SellerContactsTable(schema);
    this.confirmations = `${quoted}.listing_confirmations`;
    this.reminders = `${quoted}.staleness_reminders`;
  }

  /**
   * Records the listings' confirmations in one statement (distinct products). Keeps the newest version: a
   * redelivered older event never moves a confirmation back.
   */
  async recordConfirmations(
    q: Queryable,
    listings: readonly {
      readonly productId: string;
      readonly sellerAccountId: number;
      readonly name: string;
      readonly confirmedAt: number;
      readonly version: number;
    }[],
  ): Promise<void> {
    if (listings.length === 0) return;
    await q.query(
      `INSERT INTO ${this.confirmations} (product_id, seller_account_id, name, confirmed_at_ms, version)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[])
       ON CONFLICT (product_id) DO UPDATE
         SET seller_account_id = EXCLUDED.seller_account_id, name = EXCLUDED.name,
             confirmed_at_ms = EXCLUDED.confirmed_at_ms, version = EXCLUDED.version
         WHERE ${this.confirmations}.version < EXCLUDED.version`,
      [
        listings.map((listing) => listing.productId),
        listings.map((listing) => listing.sellerAccountId),
        listings.map((listing) => listing.name),
        listings.map((listing) => listing.confirmedAt),
        listings.map((listing) => listing.version),
      ],
    );
  }

  /**
   * Periods stale at `cutoff` whose reminder is not queued yet, oldest first. Listings whose seller contact has
   * not arrived yet wait for it.
   */
  async due(q: Queryable, cutoff: number, limit: number): Promise<DueReminder[]> {
    const { rows } = await q.query<{
      product_id: string;
      confirmed_at_ms: string;
      listing_name: string;
      seller_name: string;
      email: string;
    }>(
      `SELECT c.product_id, c.confirmed_at_ms, c.name AS listing_name, s.name AS seller_name, s.email
         FROM ${this.confirmations} c
         JOIN ${this.sellerContacts.table} s ON s.account_id = c.seller_account_id
         LEFT JOIN ${this.reminders} r ON r.product_id = c.product_id AND r.confirmed_at_ms = c.confirmed_at_ms
        WHERE c.confirmed_at_ms <= $1 AND r.product_id IS NULL
        ORDER BY c.confirmed_at_ms, c.product_id
        LIMIT $2`,
      [cutoff, limit],
    );
    return rows.map((row) => ({
      productId: row.product_id,
      confirmedAt: Number(row.confirmed_at_ms),
      listingName: row.listing_name,
      sellerName: row.seller_name,
      sellerEmail: row.email,
    }));
  }

  /**
   * Records the periods whose reminder `tx` queues; resolves to those recorded now. A period another replica
   * recorded first is left out (the primary key serializes them), so each period's email is queued once.
   */
  async recordQueued<P extends { readonly productId: string; readonly confirmedAt: number }>(
    tx: Queryable,
    periods: readonly P[],
    now: number,
  ): Promise<P[]> {
    if (periods.length === 0) return [];
    const { rows } = await tx.query<{ product_id: string; confirmed_at_ms: string }>(
      `INSERT INTO ${this.reminders} (product_id, confirmed_at_ms, queued_at_ms)
       SELECT p.product_id, p.confirmed_at_ms, $3 FROM unnest($1::text[], $2::bigint[]) AS p(product_id, confirmed_at_ms)
       ON CONFLICT (product_id, confirmed_at_ms) DO NOTHING
       RETURNING product_id, confirmed_at_ms`,
      [periods.map((period) => period.productId), periods.map((period) => period.confirmedAt), now],
    );
    const recorded = new Set(rows.map((row) => `${row.product_id}@${row.confirmed_at_ms}`));
    return periods.filter((period) => recorded.has(`${period.productId}@${period.confirmedAt}`));
  }
}
