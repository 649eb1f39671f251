import { quoteIdent } from '@marketplace/database';
import type { Queryable } from '@marketplace/database';
import type { PublicProductCount } from '../application/catalog-stats.query.js';
import type { CatalogProduct } from '../domain/catalog-product.js';

export interface ProductsTable {
  find(db: Queryable, id: string): Promise<CatalogProduct | undefined>;
  /**
   * Reads the products of `ids` that exist and locks their rows until the transaction ends (so two writers of one
   * product queue), in one statement.
   */
  findManyForUpdate(tx: Queryable, ids: readonly string[]): Promise<Map<string, CatalogProduct>>;
  /** Inserts or replaces the row; every write takes the next change position (product-change-feed.ts). */
  save(tx: Queryable, product: CatalogProduct): Promise<void>;
  /** `save` of several products (distinct ids) in one statement. */
  saveMany(tx: Queryable, products: readonly CatalogProduct[]): Promise<void>;
  deleteAll(tx: Queryable): Promise<void>;
  /** Up to `limit` public products whose number is above `afterNumber`, product number ascending. */
  pagePublicByNumber(db: Queryable, afterNumber: number, limit: number): Promise<CatalogProduct[]>;
  /** Public products per (category, condition) present, with how many of them are in stock. */
  countPublicByCategoryAndCondition(db: Queryable): Promise<PublicProductCount[]>;
  /** Public, in-stock products per category (categories without any are absent). */
  countPublicInStockByCategory(db: Queryable): Promise<Map<string, number>>;
  /**
   * `price / original retail` of the `limit` most recently created public products of a category and
   * condition that have an original retail price.
   */
  priceToRetailRatios(db: Queryable, category: string, condition: string, limit: number): Promise<number[]>;
}

// The visibility rule of src/domain/product-visibility.ts (`isPublic`) and `availabilityOf`, as SQL over the
// stored document, so counts and comparables need no pass over every product; the products table int tests
// check both against those functions.
const PUBLIC = `(document->>'promotePublicly')::boolean`;
const IN_STOCK = `(document->>'quantity')::bigint > 0`;

/** The products table of the catalog schema: one row per listing, the document as the catalog serves it. */
export const productsTable = (schema: string): ProductsTable => {
  const table = `${quoteIdent(schema)}.products`;
  const documentsOf = (rows: readonly { document: unknown }[]): CatalogProduct[] =>
    rows.map((row) => row.document as CatalogProduct);
  return {
    async find(db, id) {
      const { rows } = await db.query<{ document: unknown }>(
        `select document from ${table} where product_id = $1`,
        [id],
      );
      return documentsOf(rows)[0];
    },
    async findManyForUpdate(tx, ids) {
      if (ids.length === 0) return new Map();
      const { rows } = await tx.query<{ document: unknown }>(
        `select document from ${table} where product_id = any($1::text[]) order by product_id for update`,
        [ids],
      );
      return new Map(documentsOf(rows).map((product) => [product.id, product]));
    },
    async saveMany(tx, products) {
      if (products.length === 0) return;
      // Sorted by id, so two transactions writing the same products take their row locks in one order.
      const sorted = [...products].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      await tx.query(
        `insert into ${table} (product_id, version, created_at_ms, document)
         select id, version, created_at_ms, document::jsonb
         from unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[]) as r(id, version, created_at_ms, document)
         on conflict (product_id) do update
           set version = excluded.version, created_at_ms = excluded.created_at_ms, document = excluded.document,
               projected_at = now(), change_seq = default, transaction_id = default`,
        [
          sorted.map((product) => product.id),
          sorted.map((product) => product.version),
          sorted.map((product) => product.createdAtMs),
          sorted.map((product) => JSON.stringify(product)),
        ],
      );
    },
    async save(tx, product) {
      await tx.query(
        `insert into ${table} (product_id, version, created_at_ms, document) values ($1, $2, $3, $4::jsonb)
         on conflict (product_id) do update
           set version = excluded.version, created_at_ms = excluded.created_at_ms, document = excluded.document,
               projected_at = now(), change_seq = default, transaction_id = default`,
        [product.id, product.version, product.createdAtMs, JSON.stringify(product)],
      );
    },
    async deleteAll(tx) {
      await tx.query(`delete from ${table}`);
    },
    async pagePublicByNumber(db, afterNumber, limit) {
      const { rows } = await db.query<{ document: unknown }>(
        `select document from ${table} where ${PUBLIC} and product_number > $1
         order by product_number limit $2`,
        [afterNumber, limit],
      );
      return documentsOf(rows);
    },
    async countPublicByCategoryAndCondition(db) {
      const { rows } = await db.query<{
        category: string;
        condition: string;
        products: string | number;
        in_stock: string | number;
      }>(
        `select document->>'category' as category, document->>'condition' as condition, count(*) as products,
                count(*) filter (where ${IN_STOCK}) as in_stock
         from ${table} where ${PUBLIC} group by 1, 2`,
      );
      return rows.map((row) => ({
        category: row.category,
        condition: row.condition,
        products: Number(row.products),
        inStock: Number(row.in_stock),
      }));
    },
    async countPublicInStockByCategory(db) {
      const { rows } = await db.query<{ category: string; products: string | number }>(
        `select document->>'category' as category, count(*) as products from ${table}
         where ${PUBLIC} and ${IN_STOCK} group by 1`,
      );
      return new Map(rows.map((row) => [row.category, Number(row.products)]));
    },
    async priceToRetailRatios(db, category, condition, limit) {
      const { rows } = await db.query<{ ratio: string | number }>(
        `select (document->>'priceCents')::float8 / (document->>'originalRetailPriceCents')::float8 as ratio
         from ${table}
         where document->>'category' = $1 and document->>'condition' = $2 and ${PUBLIC}
           and (document->>'originalRetailPriceCents')::bigint > 0
         order by created_at_ms desc, product_id desc limit $3`,
        [category, condition, limit],
      );
      return rows.map((row) => Number(row.ratio));
    },
  };
};
