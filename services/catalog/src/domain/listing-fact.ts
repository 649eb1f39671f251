import type { CatalogProduct } from './catalog-product.js';

/**
 * What the catalog learns from one listing event, independent of its wire format. `ListingCreated` is
 * state-carrying: it holds the whole listing, as later state-carrying events will.
 */
export interface ListingCreatedFact {
  readonly type: 'ListingCreated';
  readonly eventId: string;
  readonly productId: string;
  /** The version of the listing's stream this event produced. */
  readonly version: number;
  readonly occurredAtMs: number;
  readonly product: CatalogProduct;
}

export type ListingFact = ListingCreatedFact;
