import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { ListingSnapshot, ListingSnapshots } from '../application/quote.dependencies.js';
import type { FreightTermsSnapshot } from '../domain/quote.events.js';

/** jsonb arrives parsed from PostgreSQL and as text from some engines. */
const shippingOf = (value: FreightTermsSnapshot | string): FreightTermsSnapshot =>
  typeof value === 'string' ? (JSON.parse(value) as FreightTermsSnapshot) : value;

/**
 * What the quote service knows of each listing, projected from `marketplace.listing.v1`: the seller a request
 * goes to, the name and price the seller's email shows, the stock it is compared with, and whether the listing
 * is public (only public listings take quote requests). Every listing event carries the whole listing, so the
 * newest version replaces the row whatever the kind of change.
 */
export const listingSnapshotsMigration: Migration = {
  id: 'quote-003-listing-snapshots',
  sql: (schema) => `
    CREATE TABLE ${schema}.listing_snapshots (
      product_id text PRIMARY KEY,
      seller_account_id bigint NOT NULL,
      name text NOT NULL,
      price_cents bigint NOT NULL,
      currency text NOT NULL,
      quantity bigint NOT NULL,
      promote_publicly boolean NOT NULL,
      version bigint NOT NULL
    );
  `,
};

/**
 * The listing's freight terms (docs/specification.md, "Quotes": a request keeps the terms the buyer saw).
 * `shipping_known` is false on rows written before the column: their terms are unknown until the listing's next
 * event, and a request then records none, so its checkout uses the listing's own (never "no freight").
 */
export const listingSnapshotShippingMigration: Migration = {
  id: 'quote-006-listing-snapshot-shipping',
  sql: (schema) => `
    ALTER TABLE ${schema}.listing_snapshots ADD COLUMN shipping jsonb;
    ALTER TABLE ${schema}.listing_snapshots ADD COLUMN shipping_known boolean NOT NULL DEFAULT false;
  `,
};

export class ListingSnapshotsTable implements ListingSnapshots {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.listing_snapshots`;
  }

  /** Keeps the newest version: a redelivered older event never moves a listing back. */
  async upsert(q: Queryable, listing: ListingSnapshot): Promise<void> {
    await q.query(
      `INSERT INTO ${this.table}
         (product_id, seller_account_id, name, price_cents, currency, quantity, promote_publicly, version,
          shipping, shipping_known)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, true)
       ON CONFLICT (product_id) DO UPDATE
         SET seller_account_id = EXCLUDED.seller_account_id, name = EXCLUDED.name,
             price_cents = EXCLUDED.price_cents, currency = EXCLUDED.currency, quantity = EXCLUDED.quantity,
             promote_publicly = EXCLUDED.promote_publicly, version = EXCLUDED.version,
             shipping = EXCLUDED.shipping, shipping_known = true
         WHERE ${this.table}.version < EXCLUDED.version`,
      [
        listing.productId,
        listing.sellerAccountId,
        listing.name,
        listing.priceCents,
        listing.currency,
        listing.quantity,
        listing.promotePublicly,
        listing.version,
        listing.shipping == null ? null : JSON.stringify(listing.shipping),
      ],
    );
  }

  /**
   * `upsert` of several listings in one statement, whatever their number: of one product's, the newest version
   * is written (one statement cannot update a row twice).
   */
  async upsertMany(q: Queryable, listings: readonly ListingSnapshot[]): Promise<void> {
    const newest = new Map<string, ListingSnapshot>();
    for (const listing of listings) {
      const held = newest.get(listing.productId);
      if (held === undefined || held.version < listing.version) newest.set(listing.productId, listing);
    }
    if (newest.size === 0) return;
    // Sorted by id, so two transactions writing the same listings take their row locks in one order.
    const rows = [...newest.values()].sort((a, b) =>
      a.productId < b.productId ? -1 : a.productId > b.productId ? 1 : 0,
    );
    await q.query(
      `INSERT INTO ${this.table}
         (product_id, seller_account_id, name, price_cents, currency, quantity, promote_publicly, version,
          shipping, shipping_known)
       SELECT product_id, seller_account_id, name, price_cents, currency, quantity, promote_publicly, version,
              shipping::jsonb, true
         FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::boolean[],
                     $8::bigint[], $9::text[])
           AS r(product_id, seller_account_id, name, price_cents, currency, quantity, promote_publicly, version,
                shipping)
       ON CONFLICT (product_id) DO UPDATE
         SET seller_account_id = EXCLUDED.seller_account_id, name = EXCLUDED.name,
             price_cents = EXCLUDED.price_cents, currency = EXCLUDED.currency, quantity = EXCLUDED.quantity,
             promote_publicly = EXCLUDED.promote_publicly, version = EXCLUDED.version,
             shipping = EXCLUDED.shipping, shipping_known = true
         WHERE ${this.table}.version < EXCLUDED.version`,
      [
        rows.map((listing) => listing.productId),
        rows.map((listing) => listing.sellerAccountId),
        rows.map((listing) => listing.name),
        rows.map((listing) => listing.priceCents),
        rows.map((listing) => listing.currency),
        rows.map((listing) => listing.quantity),
        rows.map((listing) => listing.promotePublicly),
        rows.map((listing) => listing.version),
        rows.map((listing) => (listing.shipping == null ? null : JSON.stringify(listing.shipping))),
      ],
    );
  }

  async find(q: Queryable, productId: string): Promise<ListingSnapshot | undefined> {
    const { rows } = await q.query<{
      seller_account_id: string | number;
      name: string;
      price_cents: string | number;
      currency: string;
      quantity: string | number;
      promote_publicly: boolean;
      version: string | number;
      shipping: FreightTermsSnapshot | string | null;
      shipping_known: boolean;
    }>(
      `SELECT seller_account_id, name, price_cents, currency, quantity, promote_publicly, version, shipping,
              shipping_known
         FROM ${this.table} WHERE product_id = $1`,
      [productId],
    );
    const row = rows[0];
    return (
      row && {
        productId,
        sellerAccountId: Number(row.seller_account_id),
        name: row.name,
        priceCents: Number(row.price_cents),
        currency: row.currency,
        quantity: Number(row.quantity),
        promotePublicly: row.promote_publicly,
        version: Number(row.version),
        ...(row.shipping_known ? { shipping: row.shipping === null ? null : shippingOf(row.shipping) } : {}),
      }
    );
  }
}
