import type { Command } from '@marketplace/eventsourcing';
import type { ValidNewListing } from './listing.rules.js';

/**
 * What a seller sends to create a listing, before validation: categories and conditions are still plain
 * strings, absent fields take their defaults in the listing rules.
 */
export interface ListingDraft {
  readonly name: string;
  readonly description: string;
  readonly sku?: string;
  readonly category?: string;
  readonly condition?: string;
  readonly priceCents?: number;
  readonly quantity?: number;
  readonly minOrderQuantity?: number;
  readonly minQuoteQuantity?: number;
  readonly brand?: string;
  readonly imageUrl?: string;
  readonly galleryImageUrls?: readonly string[];
  readonly originalRetailPriceCents?: number;
  readonly instantCheckout?: boolean;
  readonly promotePublicly?: boolean;
  /** The lot's freight terms, as SetListingShipping takes them; absent: none (no freight is charged). */
  readonly shipping?: ShippingDraft | undefined;
}

/** A listing's images once re-hosted: paths `/images/<sha256>.<ext>` that replace the URLs the seller sent. */
export interface HostedImages {
  readonly imageUrl?: string | undefined;
  readonly galleryImageUrls: readonly string[];
  /** True when no image was sent or found: the image is the category's shipped placeholder. */
  readonly imagePlaceholder?: boolean;
}

export type CreateListing = Command<
  'CreateListing',
  {
    /** `product_<n>`, allocated before deciding; the generated sku derives from it. */
    readonly productId: string;
    /**
     * The seller and draft as the listing rules accepted them (validateNewListing): checked once, before the
     * images are fetched, not again here.
     */
    readonly accepted: ValidNewListing;
    /** Absent: the listing keeps the URLs of the draft. */
    readonly hostedImages?: HostedImages;
  }
>;

/**
 * The fields a seller may change after publishing (what a create takes), before validation; absent fields keep
 * their value. `quantity` sets the stock as SetQuantity does; image URLs are re-hosted before deciding and
 * arrive in the command's `hostedImages`.
 */
export interface ListingChanges {
  readonly name?: string;
  readonly description?: string;
  readonly sku?: string;
  readonly category?: string;
  readonly condition?: string;
  readonly priceCents?: number;
  readonly minOrderQuantity?: number;
  readonly minQuoteQuantity?: number;
  readonly brand?: string;
  readonly originalRetailPriceCents?: number;
  readonly instantCheckout?: boolean;
  readonly promotePublicly?: boolean;
  readonly quantity?: number;
  readonly imageUrl?: string;
  /** Present: the whole gallery is replaced. */
  readonly galleryImageUrls?: readonly string[];
  /** Present: replaces the freight terms, as SetListingShipping does. */
  readonly shipping?: ShippingDraft | undefined;
}

/** The seller's changes to one listing (a PUT, or one listing of a bulk update). */
export type UpdateListing = Command<
  'UpdateListing',
  {
    readonly productId: string;
    readonly sellerAccountId: number;
    readonly changes: ListingChanges;
    /** The changed images once re-hosted; absent: the listing keeps the URLs of the changes. */
    readonly hostedImages?: Partial<HostedImages>;
  }
>;

/** The seller sets the units in stock; 0 marks the listing sold out. */
export type SetQuantity = Command<
  'SetQuantity',
  { readonly productId: string; readonly sellerAccountId: number; readonly quantity: number }
>;

/** An order takes units out of stock; idempotent per reservation id. */
export type ReserveStock = Command<
  'ReserveStock',
  { readonly productId: string; readonly reservationId: string; readonly quantity: number }
>;

/** A reservation's units go back in stock; idempotent. */
export type ReleaseStock = Command<
  'ReleaseStock',
  { readonly productId: string; readonly reservationId: string }
>;

/** The seller takes the listing off sale (DELETE); idempotent. */
export type WithdrawListing = Command<
  'WithdrawListing',
  { readonly productId: string; readonly sellerAccountId: number }
>;

/** The seller puts a withdrawn listing back on sale; idempotent. */
export type RelistListing = Command<
  'RelistListing',
  { readonly productId: string; readonly sellerAccountId: number }
>;

/** What a seller sends as freight terms, before validation. */
export interface ShippingDraft {
  readonly mode: string;
  readonly cents?: number | undefined;
  readonly shipFromRegion?: string | undefined;
}

/** The seller sets the lot's freight terms (replacing any before). */
export type SetListingShipping = Command<
  'SetListingShipping',
  { readonly productId: string; readonly sellerAccountId: number; readonly shipping: ShippingDraft }
>;

export type ListingCommand =
  | CreateListing
  | UpdateListing
  | SetQuantity
  | ReserveStock
  | ReleaseStock
  | WithdrawListing
  | RelistListing
  | SetListingShipping;
