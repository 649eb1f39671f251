import type { DomainEvent } from '@marketplace/eventsourcing';
import type { Category, Condition } from '@marketplace/vocabulary';

/**
 * A lot's freight terms: included in the price; a flat amount per order; an amount per unit; collected by the
 * buyer from a region; or quoted by the seller for a destination (checkout escalates to a quote).
 */
export type ListingShipping =
  | { readonly mode: 'included' }
  | { readonly mode: 'flat_per_order'; readonly cents: number }
  | { readonly mode: 'per_unit'; readonly cents: number }
  | { readonly mode: 'buyer_pickup'; readonly shipFromRegion: string }
  | { readonly mode: 'quoted_on_request' };

/** The whole state of a listing. Money is integer cents, times are epoch milliseconds. */
export interface Listing {
  /** `product_<n>`: the aggregate id. */
  readonly productId: string;
  readonly sellerAccountId: number;
  readonly name: string;
  readonly description: string;
  readonly sku: string;
  readonly category: Category;
  readonly condition?: Condition;
  readonly priceCents: number;
  readonly currency: string;
  readonly quantity: number;
  readonly minOrderQuantity: number;
  readonly minQuoteQuantity: number;
  readonly brand?: string;
  readonly imageUrl?: string;
  readonly galleryImageUrls: readonly string[];
  /** True while the image is the category's shipped placeholder (no image sent, none similar found). */
  readonly imagePlaceholder?: boolean;
  readonly originalRetailPriceCents?: number;
  readonly instantCheckout: boolean;
  readonly promotePublicly: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Last availability confirmation: every create, update or quantity call counts as one. */
  readonly confirmedAt: number;
  /** Set while withdrawn (DELETE): off every agent-facing surface and out of checkout; absent when listed. */
  readonly withdrawnAt?: number | undefined;
  /** The freight terms; absent until the seller sets them (no freight is charged). */
  readonly shipping?: ListingShipping | undefined;
}

/** A seller published a new listing. State-carrying: consumers need no other event to know the listing. */
export type ListingCreated = DomainEvent<'ListingCreated', { readonly listing: Listing }>;

/** The seller changed price or details; `changedFields` are the REST names of the fields that changed. */
export type ListingUpdated = DomainEvent<
  'ListingUpdated',
  { readonly listing: Listing; readonly changedFields: readonly string[] }
>;

/** The seller set the units in stock (0: sold out). */
export type ListingQuantitySet = DomainEvent<'ListingQuantitySet', { readonly listing: Listing }>;

/** Units taken out of stock for an order. */
export type StockReserved = DomainEvent<
  'StockReserved',
  { readonly listing: Listing; readonly reservationId: string; readonly quantity: number }
>;

/** A reservation's units put back in stock. */
export type StockReleased = DomainEvent<
  'StockReleased',
  { readonly listing: Listing; readonly reservationId: string; readonly quantity: number }
>;

/** The seller withdrew the listing; `listing.withdrawnAt` is set. */
export type ListingWithdrawn = DomainEvent<'ListingWithdrawn', { readonly listing: Listing }>;

/** The seller listed a withdrawn listing again (an availability confirmation). */
export type ListingRelisted = DomainEvent<'ListingRelisted', { readonly listing: Listing }>;

/** The seller set the lot's freight terms (`listing.shipping`). */
export type ListingShippingSet = DomainEvent<'ListingShippingSet', { readonly listing: Listing }>;

/**
 * Every listing event is state-carrying: `listing` is the whole listing after the event, so a projection
 * replaces what it holds whatever the kind of change.
 */
export type ListingEvent =
  | ListingCreated
  | ListingUpdated
  | ListingQuantitySet
  | StockReserved
  | StockReleased
  | ListingWithdrawn
  | ListingRelisted
  | ListingShippingSet;
