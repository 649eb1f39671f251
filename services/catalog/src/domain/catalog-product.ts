/**
 * A listing as the catalog serves it: the read model every catalog surface (search, product details, and later
 * feeds and the sitemap) is built from. Money is integer cents, times epoch milliseconds.
 */
export interface CatalogProduct {
  /** `product_<n>`. */
  readonly id: string;
  readonly sellerAccountId: number;
  readonly title: string;
  readonly description: string;
  readonly sku: string;
  readonly category: string;
  /** A condition value, or '' when the seller gave none. */
  readonly condition: string;
  readonly priceCents: number;
  readonly currency: string;
  readonly quantity: number;
  readonly minOrderQuantity: number;
  readonly minQuoteQuantity: number;
  readonly brand: string;
  /** The main image first, then the gallery. */
  readonly imageUrls: readonly string[];
  readonly originalRetailPriceCents?: number;
  readonly instantCheckout: boolean;
  /** The lot's freight terms; absent until the seller sets them (docs/specification.md, "Checkout and orders"). */
  readonly shipping?: ProductShipping;
  readonly promotePublicly: boolean;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /** The version of the listing's stream this state reflects. */
  readonly version: number;
}

export interface ProductShipping {
  readonly mode: string;
  readonly cents?: number;
  readonly shipFromRegion?: string;
}

export type Availability = 'in_stock' | 'out_of_stock';

/** A listing with units left is in stock; quantity 0 marks it sold out (spec section 3). */
export const availabilityOf = (product: Pick<CatalogProduct, 'quantity'>): Availability =>
  product.quantity > 0 ? 'in_stock' : 'out_of_stock';
