import type { Migration } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { AllocateQuoteRequestId } from '../application/quote.dependencies.js';

/**
 * Quote request ids come from a PostgreSQL sequence, never from counting rows: concurrent requests get distinct
 * ids without locking each other (decisions, "Money, units and ids").
 */
export const quoteRequestIdSequenceMigration: Migration = {
  id: 'quote-001-quote-request-id-sequence',
  sql: (schema) => `create sequence ${schema}.quote_request_id_seq`,
};

export const quoteRequestIdSequence = (schema: string): AllocateQuoteRequestId => {
  const sequence = `${quoteIdent(schema)}.quote_request_id_seq`;
  return async (tx) => {
    const { rows } = await tx.query<{ n: string | number | bigint }>('select nextval($1::regclass) as n', [
      sequence,
    ]);
    const n = Number(rows[0]?.n);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${sequence} returned ${String(rows[0]?.n)}`);
    return n;
  };
};
