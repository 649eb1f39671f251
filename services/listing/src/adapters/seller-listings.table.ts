import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { parseProductId } from '@marketplace/platform';
import type { Listing } from '../domain/listing.events.js';
import type { SellerListingsQuery } from '../domain/seller-listings.query.js';
import { statusOf } from '../domain/seller-listings.query.js';
import type { SellerListingsPage, SellerListingsStore } from '../application/list-seller-listings.js';

/**
 * Each listing as it stands, for its seller's list (`ListSellerListings`): projected from this service's own
 * events (state-carrying, so the newest version wins whatever order they arrive in). Listed in the order of
 * change, oldest first, so a sync client paging with `updated_since` never misses a listing changed meanwhile:
 * it moves to the end and is seen again.
 */
export const sellerListingsMigration: Migration = {
  id: 'listing-007-seller-listings',
  sql: (schema) => `
    CREATE TABLE ${schema}.seller_listings (
      product_id text PRIMARY KEY,
      product_number bigint NOT NULL,
      seller_account_id bigint NOT NULL,
      status text NOT NULL,
      promote_publicly boolean NOT NULL,
      category text NOT NULL,
      sku text NOT NULL,
      updated_at_ms bigint NOT NULL,
      version bigint NOT NULL,
      listing jsonb NOT NULL
    );
    CREATE INDEX seller_listings_by_change
      ON ${schema}.seller_listings (seller_account_id, updated_at_ms, product_number);
    CREATE INDEX seller_listings_by_sku ON ${schema}.seller_listings (seller_account_id, sku);
  `,
};

export class SellerListingsTable implements SellerListingsStore {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.seller_listings`;
  }

  /** Keeps the newest version: a redelivered older event never moves a listing back. */
  async record(q: Queryable, listing: Listing, version: number): Promise<void> {
    await q.query(
      `INSERT INTO ${this.table} (product_id, product_number, seller_account_id, status, promote_publicly,
                                  category, sku, updated_at_ms, version, listing)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (product_id) DO UPDATE
         SET seller_account_id = EXCLUDED.seller_account_id, status = EXCLUDED.status,
             promote_publicly = EXCLUDED.promote_publicly, category = EXCLUDED.category, sku = EXCLUDED.sku,
             updated_at_ms = EXCLUDED.updated_at_ms, version = EXCLUDED.version, listing = EXCLUDED.listing
         WHERE ${this.table}.version < EXCLUDED.version`,
      [
        listing.productId,
        parseProductId(listing.productId) ?? 0,
        listing.sellerAccountId,
        statusOf(listing),
        listing.promotePublicly,
        listing.category,
        listing.sku,
        listing.updatedAt,
        version,
        JSON.stringify(listing),
      ],
    );
  }

  /** One page of the seller's listings and how many match in all; `next` is absent on the last page. */
  async page(q: Queryable, query: SellerListingsQuery): Promise<SellerListingsPage> {
    const conditions = ['seller_account_id = $1'];
    const values: unknown[] = [query.sellerAccountId];
    const where = (sql: (placeholder: string) => string, value: unknown): void => {
      values.push(value);
      conditions.push(sql(`$${values.length}`));
    };
    if (query.status !== undefined) where((p) => `status = ${p}`, query.status);
    if (query.visibility !== undefined)
      where((p) => `promote_publicly = ${p}`, query.visibility === 'public');
    if (query.category !== undefined) where((p) => `category = ${p}`, query.category);
    if (query.sku !== undefined) where((p) => `sku = ${p}`, query.sku);
    if (query.updatedSince !== undefined) where((p) => `updated_at_ms >= ${p}`, query.updatedSince);
    const filter = conditions.join(' AND ');
    const { rows: counted } = await q.query<{ total: string }>(
      `SELECT count(*) AS total FROM ${this.table} WHERE ${filter}`,
      values,
    );
    const pageValues = [...values];
    let pageFilter = filter;
    if (query.after !== undefined) {
      pageValues.push(query.after.updatedAt, query.after.productNumber);
      const n = pageValues.length;
      pageFilter += ` AND (updated_at_ms, product_number) > ($${n - 1}, $${n})`;
    }
    pageValues.push(query.limit + 1);
    const { rows } = await q.query<{ listing: Listing; version: string; product_number: string }>(
      `SELECT listing, version, product_number FROM ${this.table} WHERE ${pageFilter}
        ORDER BY updated_at_ms, product_number LIMIT $${pageValues.length}`,
      pageValues,
    );
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      listings: page.map((row) => ({ listing: row.listing, version: Number(row.version) })),
      total: Number(counted[0]?.total ?? 0),
      ...(rows.length > query.limit && last !== undefined
        ? { next: { updatedAt: last.listing.updatedAt, productNumber: Number(last.product_number) } }
        : {}),
    };
  }
}
