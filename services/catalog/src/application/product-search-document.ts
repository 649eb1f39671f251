import type { SearchDocument } from '@marketplace/search';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { isPublic } from '../domain/product-visibility.js';

/** What the search index holds of a product: the fields it matches and filters on, and the product itself. */
export const toSearchDocument = (product: CatalogProduct): SearchDocument<CatalogProduct> => ({
  id: product.id,
  version: product.version,
  title: product.title,
  description: product.description,
  category: product.category,
  condition: product.condition,
  priceCents: product.priceCents,
  public: isPublic(product),
  createdAtMs: product.createdAtMs,
  payload: product,
});
