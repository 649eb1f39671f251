import type { Database } from '@marketplace/database';
import type { EventStore, IdempotencyKeys } from '@marketplace/eventsourcing';
import type { OutgoingMailTable } from '@marketplace/outgoing-mail';
import type { Clock, Logger } from '@marketplace/platform';
import type { SellerContactsTable } from '@marketplace/seller-contacts';
import type { BulkThreshold } from '../domain/checkout.rules.js';
import type {
  CheckoutCompletions,
  DisputeNotices,
  Listings,
  OrderRecords,
  QuoteRedemptions,
  Quotes,
  StockReleases,
} from './ports.js';

export const ORDER_STREAM_TYPE = 'order';
export const CHECKOUT_STREAM_TYPE = 'checkout';

export interface OrderDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly orders: OrderRecords;
  readonly completions: CheckoutCompletions;
  readonly disputes: DisputeNotices;
  /** The service's outgoing-mail queue (`@marketplace/outgoing-mail`): the operator's dispute emails. */
  readonly outgoingMail: OutgoingMailTable;
  /** The operator's address for dispute emails (`ADMIN_EMAIL`); unset, the notices wait in `disputes`. */
  readonly disputeMailTo: string | undefined;
  readonly listings: Listings;
  readonly quotes: Quotes;
  readonly quoteRedemptions: QuoteRedemptions;
  readonly bulkThreshold: BulkThreshold;
  /** How long a checkout session can be completed after it was created. */
  readonly checkoutTtlMs: number;
  /** Called after a dispute was committed, so its operator email goes out soon (not on the request path). */
  readonly onDisputeRecorded: () => void;
  /** Called after a commit that queued mail (cancellations, resolutions): the mail worker looks now. */
  readonly onMailQueued: () => void;
  /** The stock to put back for cancelled orders, released after the commit. */
  readonly stockReleases: StockReleases;
  /** Called after a cancellation committed: the release job runs now. */
  readonly onStockReleaseQueued: () => void;
  /** Sellers' names and addresses from the account events, for the order notices. */
  readonly sellerContacts: SellerContactsTable;
  /** The keys of the checkout sessions created with an idempotency key (`<schema>.idempotency_keys`). */
  readonly idempotencyKeys: IdempotencyKeys;
}
