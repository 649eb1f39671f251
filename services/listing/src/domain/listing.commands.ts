import type { Command } from '@marketplace/eventsourcing';

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
}

/** A listing's images once re-hosted: paths `/images/<sha256>.<ext>` that replace the URLs the seller sent. */
export interface HostedImages {
  readonly imageUrl?: string | undefined;
  readonly galleryImageUrls: readonly string[];
}

export type CreateListing = Command<
  'CreateListing',
  {
    /** `product_<n>`, allocated before deciding; the generated sku derives from it. */
    readonly productId: string;
    readonly sellerAccountId: number;
    readonly draft: ListingDraft;
    /** Absent: the listing keeps the URLs of the draft. */
    readonly hostedImages?: HostedImages;
  }
>;

export type ListingCommand = CreateListing;
