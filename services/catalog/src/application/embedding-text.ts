import type { CatalogProduct } from '../domain/catalog-product.js';

/** What the catalog embeds of a listing: its title, then its description (the bench embeds the same). */
export const embeddingTextOf = (product: Pick<CatalogProduct, 'title' | 'description'>): string =>
  `${product.title}. ${product.description}`;
