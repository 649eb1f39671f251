import type { LockListingStream } from '../application/change-listing.js';

/**
 * A transaction-scoped advisory lock per listing stream: writers of one listing queue in PostgreSQL instead of
 * racing and retrying (fifty concurrent reservations of the last units would otherwise retry up to fifty
 * times). The key names the schema, so two listing schemas in one database never share a lock.
 */
export const listingStreamLock =
  (schema: string): LockListingStream =>
  async (tx, productId) => {
    await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `${schema}.listing:${productId}`,
    ]);
  };
