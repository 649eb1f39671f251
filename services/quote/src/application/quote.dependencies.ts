import type { Database, Queryable } from '@marketplace/database';
import type { EventStore, IdempotencyKeys } from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import type { ListingSnapshotsTable } from '../adapters/listing-snapshots.table.js';
import type { QuoteRequestsTable } from '../adapters/quote-requests.table.js';
import type { ClaimTokens } from './claim-tokens.js';

/** The stream type of quote requests: selects the topic `marketplace.quote.v1`. */
export const QUOTE_STREAM_TYPE = 'quote';

/** `quote_<id>`: the stream of a quote request and its key on the log. */
export const quoteStreamIdOf = (quoteRequestId: number): string => `quote_${quoteRequestId}`;

/** Takes the next quote request id (ids come in blocks: mostly without a statement). */
export type AllocateQuoteRequestId = (q: Queryable) => Promise<number>;

export interface QuoteDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly allocateQuoteRequestId: AllocateQuoteRequestId;
  readonly quoteRequests: QuoteRequestsTable;
  readonly listings: ListingSnapshotsTable;
  /** The keys of the quote requests filed with an idempotency key (`<schema>.idempotency_keys`). */
  readonly idempotencyKeys: IdempotencyKeys;
  /** Derives and checks the claim tokens of anonymous requests. */
  readonly claimTokens: ClaimTokens;
}
