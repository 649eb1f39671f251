import type { catalogV1, listingV1 } from '@marketplace/proto';
import { discountPercent, toIso } from '@marketplace/platform';
import { z } from 'zod';
import type { ShippingMode } from '@marketplace/vocabulary';
import { BULK_THRESHOLD_DEFAULTS, SHIPPING_MODES } from '@marketplace/vocabulary';
import { shippingTermsOutput } from './schemas/shipping.schema.js';

const isShippingMode = (mode: string): mode is ShippingMode =>
  (SHIPPING_MODES as readonly string[]).includes(mode);

/** A catalog item as docs/specification.md, "Products and pagination" shows it in search results. Prices are integer cents. */
export interface ProductSummary {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly price: number;
  readonly currency: string;
  /** `in_stock` or `out_of_stock`. */
  readonly availability: string;
  readonly quantity_available: number;
  readonly images: readonly { readonly url: string }[];
  readonly url: string;
}

/**
 * The product details of GET /api/ucp/catalog/products/{id} and of a created listing: the summary fields plus
 * what a buyer needs to decide (pricing and order quantities, condition, category, seller), and timestamps.
 */
export interface ProductDetails extends ProductSummary {
  readonly sku: string;
  readonly brand: string | null;
  readonly category: string;
  readonly condition: string | null;
  readonly pricing: {
    readonly unit_price: number;
    readonly currency: string;
    readonly original_retail_price: number | null;
    /** Whole percent off the original retail price; null without one. */
    readonly discount_percent: number | null;
    readonly min_order_quantity: number;
    readonly min_quote_quantity: number;
    readonly instant_checkout: boolean;
    /** Above either bound a line goes through request_quote instead of checkout (docs/specification.md, "Checkout and orders"). */
    readonly bulk_threshold: { readonly more_than_units: number; readonly more_than_subtotal: number };
  };
  /** Name, company and country are null until the catalog has seen the seller's account (and when not given). */
  readonly seller: {
    readonly account_id: number;
    readonly name: string | null;
    readonly company: string | null;
    readonly country: string | null;
  };
  /** The lot's freight terms; null until the seller sets them (no freight is charged). */
  readonly shipping: ShippingView | null;
  readonly promote_publicly: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

const listingStatusOf = (listing: listingV1.Listing): string => {
  if (listing.withdrawnAtMs !== undefined) return 'withdrawn';
  return listing.quantity > 0 ? 'active' : 'sold_out';
};

/** The seller's own view of a listing (GET /api/products, list_my_listings). */
export interface SellerListing extends ProductDetails {
  /** `active` (in stock), `sold_out` or `withdrawn`. */
  readonly status: string;
  /** The listing's version: its ETag, and what If-Match names. */
  readonly version: number;
  /** True while the image is the category's shipped placeholder. */
  readonly image_placeholder: boolean;
}

/** Freight terms as sellers and buyers read them: cents and ship_from_region only for the modes that take them. */
export interface ShippingView {
  readonly mode: ShippingMode;
  readonly cents?: number;
  readonly ship_from_region?: string;
}

export const shippingViewOf = (
  shipping: { mode: string; cents?: number | undefined; shipFromRegion?: string | undefined } | undefined,
): ShippingView | null =>
  shipping === undefined
    ? null
    : {
        // A mode this version does not know reads as quoted on request, as the order service prices it:
        // the buyer asks, nothing is guessed.
        mode: isShippingMode(shipping.mode) ? shipping.mode : 'quoted_on_request',
        ...(shipping.cents === undefined ? {} : { cents: shipping.cents }),
        ...(shipping.shipFromRegion === undefined ? {} : { ship_from_region: shipping.shipFromRegion }),
      };

/** A listing as its creation answers it: with notices when something was chosen for the seller. */
export interface CreatedListingView extends ProductDetails {
  readonly notices?: string[];
}

/** What both the catalog's Product and the listing service's Listing say about a product. */
interface ProductFacts {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly priceCents: number;
  readonly currency: string;
  readonly availability: string;
  readonly quantity: number;
  readonly imageUrls: readonly string[];
  readonly sku: string;
  readonly brand: string;
  readonly category: string;
  readonly condition: string;
  readonly originalRetailPriceCents?: number | undefined;
  readonly minOrderQuantity: number;
  readonly minQuoteQuantity: number;
  readonly instantCheckout: boolean;
  readonly promotePublicly: boolean;
  readonly sellerAccountId: number;
  readonly seller?: catalogV1.SellerProfile | undefined;
  readonly shipping?:
    { mode: string; cents?: number | undefined; shipFromRegion?: string | undefined } | undefined;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** Renders products for the outside: snake_case fields, absolute URLs under the public base URL. */
export class ProductViews {
  constructor(private readonly publicBaseUrl: string) {}

  /** Where a product's details live; also the Location of a created listing. */
  productUrl(productId: string): string {
    return `${this.publicBaseUrl}/api/ucp/catalog/products/${encodeURIComponent(productId)}`;
  }

  summaryOf(product: catalogV1.Product): ProductSummary {
    return this.summary(factsOfCatalogProduct(product));
  }

  detailsOf(product: catalogV1.Product): ProductDetails {
    return this.details(factsOfCatalogProduct(product));
  }

  detailsOfListing(listing: listingV1.Listing): ProductDetails {
    return this.details({
      id: listing.productId,
      title: listing.name,
      description: listing.description,
      priceCents: listing.priceCents,
      currency: listing.currency,
      // docs/specification.md, "Checkout and orders": a listing whose quantity is 0 is sold out.
      availability: listing.quantity > 0 ? 'in_stock' : 'out_of_stock',
      quantity: listing.quantity,
      imageUrls: [listing.imageUrl, ...listing.galleryImageUrls].filter((url) => url.length > 0),
      sku: listing.sku,
      brand: listing.brand,
      category: listing.category,
      condition: listing.condition,
      originalRetailPriceCents: listing.originalRetailPriceCents,
      minOrderQuantity: listing.minOrderQuantity,
      minQuoteQuantity: listing.minQuoteQuantity,
      instantCheckout: listing.instantCheckout,
      shipping: listing.shipping,
      promotePublicly: listing.promotePublicly,
      sellerAccountId: listing.sellerAccountId,
      createdAtMs: listing.createdAtMs,
      updatedAtMs: listing.updatedAtMs,
    });
  }

  /** A listing as its seller reads it back: the details, the aggregate version (the ETag) and its status. */
  sellerListingOf(listing: listingV1.Listing): SellerListing {
    return {
      ...this.detailsOfListing(listing),
      status: listingStatusOf(listing),
      version: listing.version,
      image_placeholder: listing.imagePlaceholder,
    };
  }

  private summary(facts: ProductFacts): ProductSummary {
    return {
      id: facts.id,
      title: facts.title,
      description: facts.description,
      price: facts.priceCents,
      currency: facts.currency,
      availability: facts.availability,
      quantity_available: facts.quantity,
      // Re-hosted images are stored as paths under /images/: make them absolute for agents.
      images: facts.imageUrls.map((url) => ({ url: new URL(url, `${this.publicBaseUrl}/`).toString() })),
      url: this.productUrl(facts.id),
    };
  }

  private details(facts: ProductFacts): ProductDetails {
    return {
      ...this.summary(facts),
      sku: facts.sku,
      brand: emptyAsNull(facts.brand),
      category: facts.category,
      condition: facts.condition === '' ? null : facts.condition,
      pricing: {
        unit_price: facts.priceCents,
        currency: facts.currency,
        original_retail_price: facts.originalRetailPriceCents ?? null,
        discount_percent: discountPercent(facts.priceCents, facts.originalRetailPriceCents) ?? null,
        min_order_quantity: facts.minOrderQuantity,
        min_quote_quantity: facts.minQuoteQuantity,
        instant_checkout: facts.instantCheckout,
        bulk_threshold: {
          more_than_units: BULK_THRESHOLD_DEFAULTS.moreThanUnits,
          more_than_subtotal: BULK_THRESHOLD_DEFAULTS.moreThanSubtotalCents,
        },
      },
      seller: {
        account_id: facts.sellerAccountId,
        name: emptyAsNull(facts.seller?.name),
        company: emptyAsNull(facts.seller?.company),
        country: emptyAsNull(facts.seller?.country),
      },
      shipping: shippingViewOf(facts.shipping),
      promote_publicly: facts.promotePublicly,
      created_at: toIso(facts.createdAtMs),
      updated_at: toIso(facts.updatedAtMs),
    };
  }
}

/** The name a seller trades under, for agents (the feed's seller_name, UCP's variant seller): company, name, or its number. */
export const sellerDisplayNameOf = (seller: ProductDetails['seller']): string =>
  seller.company ?? seller.name ?? `Seller ${seller.account_id}`;

/** Protobuf cannot omit a string: '' (or nothing at all) is shown as null. */
const emptyAsNull = (text: string | undefined): string | null =>
  text === undefined || text === '' ? null : text;

const factsOfCatalogProduct = (product: catalogV1.Product): ProductFacts => ({
  ...product,
  quantity: product.quantityAvailable,
});

// The JSON Schemas of these views, for the tools' outputs and the route docs of the catalog and the listings.

/** A catalog item as docs/specification.md, "Products and pagination" shows it (ProductSummary); other catalog-shaped tools extend it. */
export const productSummaryOutput = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  price: z.number().int().describe('unit price in cents'),
  currency: z.string(),
  availability: z.enum(['in_stock', 'out_of_stock']),
  quantity_available: z.number().int(),
  images: z.array(z.object({ url: z.string() })),
  url: z.string(),
});

export const productDetailsOutput = productSummaryOutput.extend({
  sku: z.string(),
  brand: z.string().nullable(),
  category: z.string(),
  condition: z.string().nullable(),
  pricing: z.object({
    unit_price: z.number().int(),
    currency: z.string(),
    original_retail_price: z.number().int().nullable(),
    discount_percent: z.number().int().nullable(),
    min_order_quantity: z.number().int(),
    min_quote_quantity: z.number().int(),
    instant_checkout: z.boolean(),
    bulk_threshold: z.object({ more_than_units: z.number().int(), more_than_subtotal: z.number().int() }),
  }),
  seller: z.object({
    account_id: z.number().int(),
    name: z.string().nullable(),
    company: z.string().nullable(),
    country: z.string().nullable(),
  }),
  shipping: shippingTermsOutput.describe(
    'the freight terms, apart from the price; null until set (no freight is charged)',
  ),
  promote_publicly: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
