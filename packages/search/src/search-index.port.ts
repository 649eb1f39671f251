/**
 * The SearchIndex port: the lexical product index the catalog projects listing events into. Adapters: the
 * embedded one (our inverted index, in process or in a worker thread) and Elasticsearch. All pass one contract
 * suite (`@marketplace/search/testing`), so every behaviour promised here is tested once for all of them.
 *
 * Every method is asynchronous because a remote adapter needs it; the embedded adapter answers from memory.
 * A write is visible to searches once its promise resolved (Elasticsearch: `refresh: 'wait_for'`).
 */

/** One listing as the index sees it: the fields it matches, filters and sorts on, plus an opaque payload. */
export interface SearchDocument<P = unknown> {
  /** The product id; one document per id. */
  readonly id: string;
  /**
   * The version of the listing's stream this document reflects. The index keeps the highest version it has
   * seen for an id, so a redelivered or reordered older update never overwrites a newer one.
   */
  readonly version: number;
  /** Matched by text queries, weighted above the description. */
  readonly title: string;
  readonly description: string;
  readonly category: string;
  /** A condition value, or '' when the seller gave none (such a listing never passes a condition filter). */
  readonly condition: string;
  /** Unit price in cents, for the price range filter. */
  readonly priceCents: number;
  /**
   * Whole percent off the original retail price, for the minimum-discount filter; absent when the listing
   * has no original retail price (it then never passes that filter).
   */
  readonly discountPercent?: number;
  /** Whether agent-facing (public) surfaces may return it; the catalog's visibility rule decides. */
  readonly public: boolean;
  /** Epoch milliseconds; a query without text lists the newest first, and equal scores break on it too. */
  readonly createdAtMs: number;
  /** Returned with each hit as stored, so a search answers without a second lookup; never interpreted. */
  readonly payload: P;
}

export interface SearchFilters {
  readonly category?: string;
  readonly condition?: string;
  /** Inclusive bounds on `priceCents`. */
  readonly minPriceCents?: number;
  readonly maxPriceCents?: number;
  /** Inclusive lower bound on `discountPercent`; documents without one never pass. */
  readonly minDiscountPercent?: number;
  /** `public`: only documents with `public: true`; `any`: every document (internal callers only). */
  readonly visibility: 'public' | 'any';
}

/**
 * Bounds on query text. Each word is one more postings list for the embedded index to check every candidate
 * against: the word limit bounds the slowest query (see the package README).
 */
export const SEARCH_TEXT_LIMITS = { maxCharacters: 1_000, maxWords: 32 } as const;

/** Words as the limit counts them: runs of non-space characters (`WH-1000XM4` is one word). */
export const wordCount = (text: string): number => text.split(/\s+/u).filter((word) => word !== '').length;

export interface SearchQuery {
  /**
   * Words to match, all of them (AND): every word narrows the result. Absent or blank: every document that
   * passes the filters, newest first. Within SEARCH_TEXT_LIMITS; adapters reject longer text.
   */
  readonly text?: string;
  readonly filters: SearchFilters;
  /** Page size, at least 1. */
  readonly limit: number;
  /** Documents to skip, at least 0. */
  readonly offset: number;
}

export interface SearchHit<P = unknown> {
  readonly id: string;
  /** Relevance (higher is better; comparable only within one result); absent for a query without text. */
  readonly score?: number;
  readonly document: SearchDocument<P>;
}

export interface SearchResult<P = unknown> {
  /**
   * The page: by descending score, then newest first, then by id, so equal scores page deterministically.
   */
  readonly hits: readonly SearchHit<P>[];
  /** How many documents match the whole query (text and filters), independent of limit and offset. */
  readonly total: number;
}

/** `applied`: the index changed; `stale`: it already held this version of the document or a newer one. */
export type WriteOutcome = 'applied' | 'stale';

export interface SearchIndex<P = unknown> {
  /** Adds or replaces a document unless the index already holds this version of it or a newer one. */
  upsert(document: SearchDocument<P>): Promise<WriteOutcome>;
  /**
   * The same as `upsert` for each document, in order. Loads and rebuilds go through it: a remote adapter
   * sends one bulk request, the embedded one yields to the event loop between batches.
   */
  upsertMany(documents: readonly SearchDocument<P>[]): Promise<WriteOutcome[]>;
  /**
   * Removes a document as of `version`: a later upsert with that version or an older one is stale, so a
   * redelivered create cannot bring back a removed listing.
   */
  remove(id: string, version: number): Promise<WriteOutcome>;
  search(query: SearchQuery): Promise<SearchResult<P>>;
  /** How many documents the index holds (all visibilities). */
  count(): Promise<number>;
  /** Removes every document and every remembered version; used before a rebuild from the log. */
  clear(): Promise<void>;
}
