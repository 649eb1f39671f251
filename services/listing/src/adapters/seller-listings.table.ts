import type { Migration, Queryable } from '@marketplace/database';
import type { CompanionWrite } from '@marketplace/eventsourcing';
import { quoteIdent } from '@marketplace/database';
import { parseProductId } from '@marketplace/platform';
import type { Listing } from '../domain/listing.events.js';
import type { SellerListingsQuery } from '../domain/seller-listings.query.js';
import { statusOf } from '../domain/seller-listings.query.js';
import type {
  SellerListingsByProductId,
  SellerListingRow,
  SellerListingsPage,
  SellerListingsStore,
} from '../application/list-seller-listings.js';

/**
 * Each listing as it stands, for its seller's list (`ListSellerListings`): written by the append of each of its
 * events (`rowOf`), so the newest version wins and the list is never behind the seller's own writes. Listed in the order of
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

/**
 * The list was a projection through the log before the appends wrote it: a listing whose last events the
 * projection had not applied yet is brought up to date from the event store once, the newest version winning.
 */
export const sellerListingsFromEventsMigration: Migration = {
  id: 'listing-008-seller-listings-from-events',
  sql: (schema) => `
    INSERT INTO ${schema}.seller_listings (product_id, product_number, seller_account_id, status, promote_publicly,
                                           category, sku, updated_at_ms, version, listing)
    SELECT DISTINCT ON (stream_id)
           stream_id, substring(stream_id FROM '^product_([0-9]+)$')::bigint,
           (data->'listing'->>'sellerAccountId')::bigint,
           CASE WHEN data->'listing' ? 'withdrawnAt' THEN 'withdrawn'
                WHEN (data->'listing'->>'quantity')::bigint > 0 THEN 'active'
                ELSE 'sold_out' END,
           (data->'listing'->>'promotePublicly')::boolean, data->'listing'->>'category', data->'listing'->>'sku',
           (data->'listing'->>'updatedAt')::bigint, version, data->'listing'
      FROM ${schema}.events
     WHERE stream_type = 'listing'
     ORDER BY stream_id, version DESC
    ON CONFLICT (product_id) DO UPDATE
      SET seller_account_id = EXCLUDED.seller_account_id, status = EXCLUDED.status,
          promote_publicly = EXCLUDED.promote_publicly, category = EXCLUDED.category, sku = EXCLUDED.sku,
          updated_at_ms = EXCLUDED.updated_at_ms, version = EXCLUDED.version, listing = EXCLUDED.listing
      WHERE ${schema}.seller_listings.version < EXCLUDED.version;
  `,
};

export class SellerListingsTable implements SellerListingsStore, SellerListingsByProductId {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.seller_listings`;
  }

  /** The row's columns, in the order `rowOf` and `rowsOf` send them. */
  private get insertRow(): string {
    return `INSERT INTO ${this.table}
         (product_id, product_number, seller_account_id, status, promote_publicly, category, sku, updated_at_ms,
          version, listing)`;
  }

  /** An existing row is replaced only by a newer version of its listing. */
  private get upsertNewer(): string {
    return `ON CONFLICT (product_id) DO UPDATE
         SET seller_account_id = EXCLUDED.seller_account_id, status = EXCLUDED.status,
             promote_publicly = EXCLUDED.promote_publicly, category = EXCLUDED.category, sku = EXCLUDED.sku,
             updated_at_ms = EXCLUDED.updated_at_ms, version = EXCLUDED.version, listing = EXCLUDED.listing
         WHERE ${this.table}.version < EXCLUDED.version`;
  }

  /**
   * The listing's row as a companion of the append of its events (one statement for both, so the seller reads
   * their own write at once): inserted, or replacing an older version.
   */
  rowOf({ listing, version }: SellerListingRow): CompanionWrite {
    return {
      sql: ({ whenAppended, firstParam: p }) => `${this.insertRow}
       SELECT $${p}::text, $${p + 1}::bigint, $${p + 2}::bigint, $${p + 3}::text, $${p + 4}::boolean,
              $${p + 5}::text, $${p + 6}::text, $${p + 7}::bigint, $${p + 8}::bigint, $${p + 9}::jsonb
        WHERE ${whenAppended}
       ${this.upsertNewer}`,
      params: [
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
    };
  }

  /** `rowOf` for the listings of a multi-stream append: one multi-row insert, each row as `rowOf` writes it. */
  rowsOf(rows: readonly SellerListingRow[]): CompanionWrite {
    const column = <T>(value: (row: SellerListingRow) => T): T[] => rows.map(value);
    return {
      sql: ({ whenAppended, firstParam: p }) => `${this.insertRow}
       SELECT * FROM unnest($${p}::text[], $${p + 1}::bigint[], $${p + 2}::bigint[], $${p + 3}::text[],
                            $${p + 4}::boolean[], $${p + 5}::text[], $${p + 6}::text[], $${p + 7}::bigint[],
                            $${p + 8}::bigint[], $${p + 9}::jsonb[])
        WHERE ${whenAppended}
       ${this.upsertNewer}`,
      params: [
        column(({ listing }) => listing.productId),
        column(({ listing }) => parseProductId(listing.productId) ?? 0),
        column(({ listing }) => listing.sellerAccountId),
        column(({ listing }) => statusOf(listing)),
        column(({ listing }) => listing.promotePublicly),
        column(({ listing }) => listing.category),
        column(({ listing }) => listing.sku),
        column(({ listing }) => listing.updatedAt),
        column(({ version }) => version),
        column(({ listing }) => JSON.stringify(listing)),
      ],
    };
  }

  /** The listings with these product ids, by id (any seller's: the caller knows they are its own). */
  async byProductIds(q: Queryable, productIds: readonly string[]): Promise<Map<string, SellerListingRow>> {
    if (productIds.length === 0) return new Map();
    const { rows } = await q.query<{ listing: Listing; version: string }>(
      `SELECT listing, version FROM ${this.table} WHERE product_id = ANY($1::text[])`,
      [productIds],
    );
    return new Map(
      rows.map((row) => [row.listing.productId, { listing: row.listing, version: Number(row.version) }]),
    );
  }

  /** The seller's listings with each of these skus (withdrawn ones too), by sku: one query for a whole bulk upsert. */
  async bySkus(
    q: Queryable,
    sellerAccountId: number,
    skus: readonly string[],
  ): Promise<Map<string, SellerListingRow[]>> {
    const bySku = new Map<string, SellerListingRow[]>();
    if (skus.length === 0) return bySku;
    const { rows } = await q.query<{ listing: Listing; version: string }>(
      `SELECT listing, version FROM ${this.table} WHERE seller_account_id = $1 AND sku = ANY($2::text[])`,
      [sellerAccountId, skus],
    );
    for (const row of rows) {
      const listed = bySku.get(row.listing.sku) ?? [];
      listed.push({ listing: row.listing, version: Number(row.version) });
      bySku.set(row.listing.sku, listed);
    }
    return bySku;
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
