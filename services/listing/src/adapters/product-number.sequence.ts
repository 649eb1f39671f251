import type { Migration } from '@marketplace/database';
import { quoteIdent, sequenceInBlocks } from '@marketplace/database';
import type { AllocateProductNumber } from '../application/create-listing.js';

/**
 * Product numbers (`product_<n>`) come from a PostgreSQL sequence, never from counting rows: concurrent creates
 * get distinct numbers without locking each other.
 */
export const productNumberSequenceMigration: Migration = {
  id: 'listing-001-product-number-sequence',
  sql: (schema) => `create sequence ${schema}.product_number_seq`,
};

/** Numbers are taken from the sequence in blocks: one round trip per block, not per listing. */
export const productNumberSequence = (schema: string): AllocateProductNumber =>
  sequenceInBlocks(`${quoteIdent(schema)}.product_number_seq`);
