import type { Migration } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { AllocateProductNumber } from '../application/create-listing.js';

/**
 * Product numbers (`product_<n>`) come from a PostgreSQL sequence, never from counting rows: concurrent creates
 * get distinct numbers without locking each other.
 */
export const productNumberSequenceMigration: Migration = {
  id: 'listing-001-product-number-sequence',
  sql: (schema) => `create sequence ${schema}.product_number_seq`,
};

export const productNumberSequence = (schema: string): AllocateProductNumber => {
  const sequence = `${quoteIdent(schema)}.product_number_seq`;
  return async (q) => {
    const { rows } = await q.query<{ n: string | number | bigint }>('select nextval($1::regclass) as n', [
      sequence,
    ]);
    const n = Number(rows[0]?.n);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${sequence} returned ${String(rows[0]?.n)}`);
    return n;
  };
};
