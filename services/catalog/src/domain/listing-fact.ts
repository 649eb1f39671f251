import type { CatalogProduct } from './catalog-product.js';

/**
 * What the catalog learns from one listing event, independent of its wire format. Every listing event is
 * state-carrying: it holds the whole listing after the event. `ListingChanged` stands for all the events after
 * the creation (updated, quantity set, stock reserved or released): the catalog replaces the product either way.
 */
export interface ListingCreatedFact {
  readonly type: 'ListingCreated' | 'ListingChanged';
  readonly eventId: string;
  readonly productId: string;
  /** The version of the listing's stream this event produced. */
  readonly version: number;
  readonly occurredAtMs: number;
  readonly product: CatalogProduct;
}

export type ListingFact = ListingCreatedFact;
