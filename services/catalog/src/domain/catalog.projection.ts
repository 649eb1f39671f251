import type { CatalogProduct } from './catalog-product.js';
import type { ListingFact } from './listing-fact.js';

/**
 * Folds one listing fact into the product the catalog holds. Returns the new product, or `undefined` when the
 * fact changes nothing: the catalog already reflects that version of the listing or a newer one (a redelivery,
 * or an event overtaken by a later one during a replay).
 */
export const projectListingFact = (
  current: CatalogProduct | undefined,
  fact: ListingFact,
): CatalogProduct | undefined => {
  if (current !== undefined && current.version >= fact.version) return undefined;
  switch (fact.type) {
    case 'ListingCreated':
    case 'ListingChanged':
      return { ...fact.product, version: fact.version };
  }
};
