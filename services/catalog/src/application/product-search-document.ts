import type { SearchDocument } from '@marketplace/search';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { discountPercentOf } from '../domain/discount.js';
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
  discountPercent: discountPercentOf(product),
  public: isPublic(product),
  createdAtMs: product.createdAtMs,
  payload: product,
});
