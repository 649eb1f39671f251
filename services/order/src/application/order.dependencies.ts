import type { Database } from '@marketplace/database';
import type { EventStore, IdempotencyKeys } from '@marketplace/eventsourcing';
import type { OutgoingMailTable } from '@marketplace/outgoing-mail';
import type { Clock, Logger } from '@marketplace/platform';
import type { CompletionsTable } from '../adapters/completions.table.js';
import type { DisputeNotificationsTable } from '../adapters/dispute-notifications.table.js';
import type { OrdersTable } from '../adapters/orders.table.js';
import type { BulkThreshold } from '../domain/checkout.rules.js';
import type { Listings, QuoteRedemptions, Quotes } from './ports.js';

export const ORDER_STREAM_TYPE = 'order';
export const CHECKOUT_STREAM_TYPE = 'checkout';

export interface OrderDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly orders: OrdersTable;
  readonly completions: CompletionsTable;
  readonly disputes: DisputeNotificationsTable;
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
  /** The keys of the checkout sessions created with an idempotency key (`<schema>.idempotency_keys`). */
  readonly idempotencyKeys: IdempotencyKeys;
}
