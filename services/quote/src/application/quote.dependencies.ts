import type { Database, Queryable } from '@marketplace/database';
import type { CompanionWrite, EventStore, IdempotencyKeys } from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import type { QuoteStatusFilter } from '@marketplace/vocabulary';
import type { FreightTermsSnapshot, QuoteRequest } from '../domain/quote.events.js';
import type { ClaimTokens } from './claim-tokens.js';

/** The stream type of quote requests: selects the topic `marketplace.quote.v1`. */
export const QUOTE_STREAM_TYPE = 'quote';

/** `quote_<id>`: the stream of a quote request and its key on the log. */
export const quoteStreamIdOf = (quoteRequestId: number): string => `quote_${quoteRequestId}`;

/** Takes the next quote request id (ids come in blocks: mostly without a statement). */
export type AllocateQuoteRequestId = (q: Queryable) => Promise<number>;

export interface StoredQuoteRequest {
  readonly quoteRequest: QuoteRequest;
  readonly version: number;
}

export interface QuoteRequestFilter {
  /** Whose requests: the seller's inbox, or a buyer account's own. */
  readonly owner: { readonly sellerAccountId: number } | { readonly buyerAccountId: number };
  readonly status: QuoteStatusFilter;
  readonly limit: number;
  readonly offset?: number;
  readonly createdSince?: number;
}

/** The quote requests as sellers and buyers list them: one row per request (adapters/quote-requests.table.ts). */
export interface QuoteRequestsStore {
  /** The row of a request's new state, written by the statement that appends its events. */
  rowOf(stored: StoredQuoteRequest): CompanionWrite;
  find(q: Queryable, quoteRequestId: number): Promise<StoredQuoteRequest | undefined>;
  /** A seller's or a buyer's requests, newest first, and how many match in all. */
  list(
    q: Queryable,
    filter: QuoteRequestFilter,
  ): Promise<{ quoteRequests: StoredQuoteRequest[]; total: number }>;
  countSince(q: Queryable, since: number): Promise<number>;
}

export interface ListingSnapshot {
  readonly productId: string;
  readonly sellerAccountId: number;
  readonly name: string;
  readonly priceCents: number;
  readonly currency: string;
  readonly quantity: number;
  readonly promotePublicly: boolean;
  /** The listing's freight terms: null when its seller set none; absent when not known (an older row). */
  readonly shipping?: FreightTermsSnapshot | null | undefined;
  readonly version: number;
}

/** What the quote service knows of each listing, projected from the listing topic. */
export interface ListingSnapshots {
  find(q: Queryable, productId: string): Promise<ListingSnapshot | undefined>;
}

export interface QuoteDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly allocateQuoteRequestId: AllocateQuoteRequestId;
  readonly quoteRequests: QuoteRequestsStore;
  readonly listings: ListingSnapshots;
  /** The keys of the quote requests filed with an idempotency key (`<schema>.idempotency_keys`). */
  readonly idempotencyKeys: IdempotencyKeys;
  /** Derives and checks the claim tokens of anonymous requests. */
  readonly claimTokens: ClaimTokens;
}
