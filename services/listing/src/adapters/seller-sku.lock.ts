import type { LockSellerSkus } from '../application/bulk-upsert.js';

/**
 * Transaction-scoped advisory locks on a seller's skus: two bulk upserts creating one sku queue here, and the
 * second then finds the first's listing (docs/specification.md, "Bulk upsert"). Taken in one statement, in key
 * order, so two transactions locking overlapping skus never deadlock; the key names the schema, as the stream
 * lock's does.
 */
export const sellerSkuLock =
  (schema: string): LockSellerSkus =>
  async (tx, sellerAccountId, skus) => {
    if (skus.length === 0) return;
    await tx.query(
      'select pg_advisory_xact_lock(lock_key) from ' +
        '(select distinct hashtextextended(k, 0) as lock_key from unnest($1::text[]) as k order by lock_key) as keys',
      [skus.map((sku) => `${schema}.sku:${sellerAccountId}:${sku}`)],
    );
  };
