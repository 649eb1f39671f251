import type { Migration } from '@marketplace/database';
import { quoteIdent, sequenceInBlocks } from '@marketplace/database';
import type { AllocateQuoteRequestId } from '../application/quote.dependencies.js';

/**
 * Quote request ids come from a PostgreSQL sequence, never from counting rows: concurrent requests get distinct
 * ids without locking each other (docs/specification.md, "Money, units and ids").
 */
export const quoteRequestIdSequenceMigration: Migration = {
  id: 'quote-001-quote-request-id-sequence',
  sql: (schema) => `create sequence ${schema}.quote_request_id_seq`,
};

/** Numbers are taken from the sequence in blocks: one round trip per block, not per request. */
export const quoteRequestIdSequence = (schema: string): AllocateQuoteRequestId =>
  sequenceInBlocks(`${quoteIdent(schema)}.quote_request_id_seq`);
