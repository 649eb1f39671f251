import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { CompanionWrite } from '@marketplace/eventsourcing';
import type {
  QuoteRequestFilter,
  QuoteRequestsStore,
  StoredQuoteRequest,
} from '../application/quote.dependencies.js';
import type { QuoteRequest } from '../domain/quote.events.js';

/**
 * The quote requests as sellers list them: one row per request, written by the statement that appends its
 * events, so a request is listed exactly when it exists and a response shows at once. The row holds the whole
 * state (as the events carry it) plus the columns the seller's list filters and sorts on.
 */
export const quoteRequestsMigration: Migration = {
  id: 'quote-002-quote-requests',
  sql: (schema) => `
    CREATE TABLE ${schema}.quote_requests (
      quote_request_id bigint PRIMARY KEY,
      seller_account_id bigint NOT NULL,
      status text NOT NULL,
      created_at_ms bigint NOT NULL,
      version bigint NOT NULL,
      state jsonb NOT NULL
    );
    CREATE INDEX quote_requests_seller ON ${schema}.quote_requests (seller_account_id, status, created_at_ms DESC);
    CREATE INDEX quote_requests_created_at ON ${schema}.quote_requests (created_at_ms);
  `,
};

/** The buyer's side: the owning account of each request, for a buyer's own list. */
export const quoteRequestBuyersMigration: Migration = {
  id: 'quote-005-quote-request-buyers',
  sql: (schema) => `
    ALTER TABLE ${schema}.quote_requests ADD COLUMN buyer_account_id bigint;
    UPDATE ${schema}.quote_requests SET buyer_account_id = (state->>'buyerAccountId')::bigint;
    CREATE INDEX quote_requests_buyer ON ${schema}.quote_requests (buyer_account_id, created_at_ms DESC)
      WHERE buyer_account_id IS NOT NULL;
  `,
};

type Row = { state: QuoteRequest | string; version: string | number };

/** PGlite and node-postgres both parse jsonb; a driver that does not hands over the text. */
const storedOf = (row: Row): StoredQuoteRequest => ({
  quoteRequest: typeof row.state === 'string' ? (JSON.parse(row.state) as QuoteRequest) : row.state,
  version: Number(row.version),
});

export class QuoteRequestsTable implements QuoteRequestsStore {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.quote_requests`;
  }

  /**
   * The row of a request as a companion of the append of its events (one statement for both): inserted, or
   * replacing an older version.
   */
  rowOf({ quoteRequest, version }: StoredQuoteRequest): CompanionWrite {
    return {
      sql: ({ whenAppended, firstParam: p }) => `INSERT INTO ${this.table}
         (quote_request_id, seller_account_id, buyer_account_id, status, created_at_ms, version, state)
       SELECT $${p}::bigint, $${p + 1}::bigint, $${p + 2}::bigint, $${p + 3}::text, $${p + 4}::bigint,
              $${p + 5}::bigint, $${p + 6}::jsonb
        WHERE ${whenAppended}
       ON CONFLICT (quote_request_id) DO UPDATE
         SET buyer_account_id = EXCLUDED.buyer_account_id, status = EXCLUDED.status, version = EXCLUDED.version,
             state = EXCLUDED.state
         WHERE ${this.table}.version < EXCLUDED.version`,
      params: [
        quoteRequest.quoteRequestId,
        quoteRequest.product.sellerAccountId,
        quoteRequest.buyerAccountId ?? null,
        quoteRequest.status,
        quoteRequest.createdAt,
        version,
        JSON.stringify(quoteRequest),
      ],
    };
  }

  async find(q: Queryable, quoteRequestId: number): Promise<StoredQuoteRequest | undefined> {
    const { rows } = await q.query<Row>(
      `SELECT state, version FROM ${this.table} WHERE quote_request_id = $1`,
      [quoteRequestId],
    );
    return rows[0] && storedOf(rows[0]);
  }

  /** A seller's or a buyer's requests, newest first, and how many match in all. */
  async list(
    q: Queryable,
    filter: QuoteRequestFilter,
  ): Promise<{ quoteRequests: StoredQuoteRequest[]; total: number }> {
    const { owner } = filter;
    const conditions = ['sellerAccountId' in owner ? 'seller_account_id = $1' : 'buyer_account_id = $1'];
    const params: unknown[] = ['sellerAccountId' in owner ? owner.sellerAccountId : owner.buyerAccountId];
    if (filter.status !== 'all') {
      params.push(filter.status);
      conditions.push(`status = $${params.length}`);
    }
    if (filter.createdSince !== undefined) {
      params.push(filter.createdSince);
      conditions.push(`created_at_ms >= $${params.length}`);
    }
    params.push(filter.limit, filter.offset ?? 0);
    const where = conditions.join(' AND ');
    const { rows } = await q.query<Row & { total: string | number }>(
      `SELECT state, version, count(*) OVER () AS total
         FROM ${this.table}
        WHERE ${where}
        ORDER BY created_at_ms DESC, quote_request_id DESC
        LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    const first = rows[0];
    if (first !== undefined) return { quoteRequests: rows.map(storedOf), total: Number(first.total) };
    // Past the last page (or nothing matches): the total needs its own count.
    if ((filter.offset ?? 0) === 0) return { quoteRequests: [], total: 0 };
    const counted = await q.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM ${this.table} WHERE ${where}`,
      params.slice(0, -2),
    );
    return { quoteRequests: [], total: Number(counted.rows[0]?.n ?? 0) };
  }

  async countSince(q: Queryable, since: number): Promise<number> {
    const { rows } = await q.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM ${this.table} WHERE created_at_ms >= $1`,
      [since],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
