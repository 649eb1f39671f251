import type { DomainEvent } from '@marketplace/eventsourcing';
import type { Category, Condition } from '@marketplace/vocabulary';

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
  | ListingRelisted;
