// The ports of the subscription service's application code: what it needs of storage, implemented by adapters/.

import type { Queryable } from '@marketplace/database';
import type { QueuedMail } from '@marketplace/outgoing-mail';
import type { MatchedProduct } from '../domain/match-notification.js';
import type { ListingFacts } from '../domain/saved-search.match.js';
import type { WebhookSecretState } from '../domain/subscription.decider.js';
import type { Subscription } from '../domain/subscription.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type DeliveryChannelType = 'webhook' | 'email';

/** A notification to send: enqueued with the match, its body fixed then, so every retry sends the same bytes. */
export interface NewDelivery {
  readonly deliveryId: string;
  readonly subscriptionId: string;
  readonly productId: string;
  /** Index of the channel in the subscription: with the pair, the delivery's unique key. */
  readonly channelIndex: number;
  readonly channelType: DeliveryChannelType;
  /** The webhook URL or the email address. */
  readonly target: string;
  /** The saved_search.match JSON body. */
  readonly body: string;
}

export interface Delivery extends NewDelivery {
  readonly status: DeliveryStatus;
  /** Attempts started, the one in hand included. */
  readonly attempts: number;
  readonly nextAttemptAt?: number;
  readonly lastAttemptAt?: number;
  readonly lastError?: string;
  readonly createdAt: number;
  readonly deliveredAt?: number;
}

export interface Deliveries {
  /** Enqueues, due at once; an existing (subscription, product, channel) row is left alone. */
  enqueue(tx: Queryable, deliveries: readonly NewDelivery[], now: number): Promise<void>;
  /** Claims up to `limit` due deliveries for one attempt each (see the class comment). */
  claimDue(db: Queryable, now: number, limit: number, leaseMs: number): Promise<Delivery[]>;
  /** When the earliest pending delivery is due, or undefined when none is pending. */
  nextDueAt(db: Queryable): Promise<number | undefined>;
  markDelivered(db: Queryable, deliveryId: string, now: number): Promise<void>;
  /** Records a failed attempt: due again at `retryAt`, or failed for good without one. */
  markAttemptFailed(
    db: Queryable,
    deliveryId: string,
    error: string,
    retryAt: number | undefined,
  ): Promise<void>;
  /** A subscription's deliveries, newest first. */
  recent(db: Queryable, subscriptionId: string): Promise<Delivery[]>;
}

export interface ResourceMatch {
  readonly productId: string;
  readonly matchedAt: number;
  readonly product: MatchedProduct;
}

export interface SearchMatches {
  /** Stores a seller's country unless a newer version of the account is already here. */
  saveSeller(
    tx: Queryable,
    seller: {
      accountId: number;
      country: string;
      version: number;
    },
  ): Promise<void>;
  /** The seller's country: '' when the account has none, undefined while the account is unknown. */
  sellerCountry(db: Queryable, accountId: number): Promise<string | undefined>;
  /**
   * Records that these subscriptions matched the product and returns those that had not matched it before:
   * the primary key makes a redelivered listing event match (and notify) nobody twice.
   */
  recordNew(
    tx: Queryable,
    productId: string,
    subscriptionIds: readonly string[],
    matchedAt: number,
  ): Promise<Set<string>>;
  /** Adds a match to each subscription's resource and forgets what falls beyond the last 100. */
  addToResources(tx: Queryable, subscriptionIds: readonly string[], match: ResourceMatch): Promise<void>;
  /** A subscription's resource matches, newest first. */
  recentMatches(db: Queryable, subscriptionId: string): Promise<ResourceMatch[]>;
}

/** What a listing must offer for the index to return a subscription. */
export interface MatchKeys {
  readonly category: string;
  readonly condition: string;
  readonly priceCents: number;
  /** Subscriptions created after this moment never match (a saved search is about listings to come). */
  readonly createdAt: number;
}

export interface SavedSearches {
  insert(tx: Queryable, subscription: Subscription): Promise<void>;
  markDeleted(tx: Queryable, subscriptionId: string, deletedAt: number): Promise<void>;
  rotateWebhookSecret(
    tx: Queryable,
    subscriptionId: string,
    webhookSecretState: WebhookSecretState,
  ): Promise<void>;
  /** Which webhook secret signs a subscription's deliveries (deleted ones too: their queued deliveries). */
  webhookSecretOf(db: Queryable, subscriptionId: string): Promise<WebhookSecretState | undefined>;
  /** A live subscription of `ownerAccountId`, or undefined (also when it belongs to someone else). */
  findOwned(db: Queryable, subscriptionId: string, ownerAccountId: number): Promise<Subscription | undefined>;
  /** The owner's live subscriptions, oldest first. */
  listOwned(db: Queryable, ownerAccountId: number): Promise<Subscription[]>;
  /**
   * For each listing, in order, the live subscriptions whose category, condition and price range admit it, in
   * one statement: four range scans of the match index per listing (exact or any category × exact or any
   * condition), whatever the number of subscriptions. The remaining filters (text, quantities, country, bulk)
   * are the caller's, on these short lists.
   */
  candidates(db: Queryable, listings: readonly MatchKeys[]): Promise<Subscription[][]>;
}

export interface SellerWebhook {
  readonly endpointId: string;
  readonly sellerAccountId: number;
  readonly url: string;
  readonly createdAt: number;
}

export interface SellerWebhookEndpoints {
  insert(db: Queryable, webhook: SellerWebhook): Promise<void>;
  /** The seller's live endpoints, oldest first. */
  live(db: Queryable, sellerAccountId: number): Promise<SellerWebhook[]>;
  /** Whether a live endpoint of this seller was removed. */
  remove(db: Queryable, sellerAccountId: number, endpointId: string, now: number): Promise<boolean>;
  recordOrder(db: Queryable, orderId: number, sellerAccountId: number): Promise<void>;
  sellerOfOrder(db: Queryable, orderId: number): Promise<number | undefined>;
}

/** A new listing as matching sees it; the seller's country is added from the sellers table. */
export interface NewListing {
  readonly eventId: string;
  readonly listing: Omit<ListingFacts, 'sellerCountry'>;
}

/** The events a seller's webhook receives (docs/specification.md, "Seller notifications"). */
export const SELLER_EVENT_TYPES = ['order.placed', 'quote.requested', 'order.disputed'] as const;
export type SellerEventType = (typeof SELLER_EVENT_TYPES)[number];

/** An event for one seller, or for the seller of an order (order.disputed names the order only). */
export type SellerEvent = {
  readonly type: SellerEventType;
  /** The event's subject, unique per type: the delivery key with the endpoint. */
  readonly subject: string;
  readonly occurredAt: number;
  readonly data: Record<string, unknown>;
} & (
  | { readonly sellerAccountId: number; readonly orderId?: number }
  | { readonly sellerAccountId?: undefined; readonly orderId: number }
);

/** The mailboxes whose owners confirmed them (double opt-in, docs/security.md, API6). */
export interface ConfirmedMailboxes {
  markConfirmed(tx: Queryable, mailbox: string, confirmedAt: number): Promise<void>;
  /** Which of these normalised mailboxes are confirmed. */
  confirmedAmong(db: Queryable, mailboxes: readonly string[]): Promise<Set<string>>;
}

/** The outgoing-mail queue (docs/architecture.md, "Outgoing mail"): written in the caller's transaction. */
export interface OutgoingMail {
  enqueue(tx: Queryable, messages: readonly QueuedMail[], now: number): Promise<number>;
}
