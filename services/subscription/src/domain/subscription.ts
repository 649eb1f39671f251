import type { Command, DomainEvent } from '@marketplace/eventsourcing';
import type { Category, Condition } from '@marketplace/vocabulary';

/**
 * The filter of a saved search (docs/specification.md, "Saved searches"): every key optional, absent means "any". Money is
 * integer cents per unit. `original` is the query object as the subscriber sent it, unknown keys included:
 * stored and echoed in match payloads, never matched on.
 */
export interface SavedSearchQuery {
  readonly category?: Category;
  readonly condition?: Condition;
  readonly search?: string;
  readonly minPriceCents?: number;
  readonly maxPriceCents?: number;
  readonly minQuantity?: number;
  /** ISO 3166-1 alpha-2, upper case. */
  readonly sellerCountry?: string;
  /** Bounds on the listing's minimum order quantity. */
  readonly moqRange?: { readonly min?: number; readonly max?: number };
  /** Only lots over the bulk threshold. */
  readonly bulkDealsOnly: boolean;
  readonly original: Readonly<Record<string, unknown>>;
}

export type Channel =
  | { readonly type: 'webhook'; readonly url: string }
  | { readonly type: 'email'; readonly email: string }
  | { readonly type: 'mcp_resource' };

export type ChannelType = Channel['type'];

/** The whole state of a subscription. Times are epoch milliseconds. */
export interface Subscription {
  /** `sub_<random>`: the aggregate id. */
  readonly subscriptionId: string;
  /** The owning account (API key or agent token); undefined for an anonymous subscription. */
  readonly ownerAccountId?: number;
  readonly query: SavedSearchQuery;
  readonly channels: readonly Channel[];
  readonly createdAt: number;
}

/** What a caller sends, before validation: the query as any JSON value, channels as loose objects. */
export interface SubscriptionDraft {
  readonly query: unknown;
  readonly channels: readonly unknown[];
}

export type SubscriptionCreated = DomainEvent<'SubscriptionCreated', { readonly subscription: Subscription }>;
export type SubscriptionDeleted = DomainEvent<'SubscriptionDeleted', { readonly deletedAt: number }>;
/**
 * The webhook signing secret moved to `generation` (docs/security.md, API2): deliveries are signed with it, and
 * with the previous generation's secret too until `previousValidUntil`.
 */
export type WebhookSecretRotated = DomainEvent<
  'WebhookSecretRotated',
  { readonly generation: number; readonly rotatedAt: number; readonly previousValidUntil: number }
>;
export type SubscriptionEvent = SubscriptionCreated | SubscriptionDeleted | WebhookSecretRotated;

/** How long a rotated-out webhook secret keeps signing deliveries beside the new one. */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1_000;

export type Subscribe = Command<
  'Subscribe',
  {
    readonly subscriptionId: string;
    readonly ownerAccountId?: number;
    readonly draft: SubscriptionDraft;
  }
>;

/**
 * Ends a subscription. Either the requester is its owner, or it presented the subscription's unsubscribe token
 * (checked by the application, which holds the secret; the decider only learns the outcome).
 */
export type Unsubscribe = Command<
  'Unsubscribe',
  {
    readonly subscriptionId: string;
    readonly requesterAccountId?: number;
    readonly unsubscribeTokenValid: boolean;
  }
>;

/**
 * Issues the next webhook signing secret. Either the requester is the owner, or (an anonymous subscription) it
 * presented a secret still valid: `presentedSecretGeneration` is the generation the application found the
 * presented secret to be, if any (the decider accepts the current one, or the previous during its overlap).
 */
export type RotateWebhookSecret = Command<
  'RotateWebhookSecret',
  {
    readonly subscriptionId: string;
    readonly requesterAccountId?: number;
    readonly presentedSecretGeneration?: number;
  }
>;

export type SubscriptionCommand = Subscribe | Unsubscribe | RotateWebhookSecret;
