import type { SearchDocument } from '../search-index.port.js';

/**
 * The text a listing is embedded from: title, description and category, so a listing leans towards its kind of
 * goods as well as its own words (`home_goods` reads as "home goods": the embedders split words on `_`).
 * Measured on the bench's labelled catalog at 5,500 listings: recall@10 0.244 against 0.202 without the
 * category (`bench/README.md`). The catalog and the bench embed exactly this.
 */
export const embeddingTextOf = (
  document: Pick<SearchDocument, 'title' | 'description' | 'category'>,
): string => `${document.title}. ${document.description}. ${document.category.replaceAll('_', ' ')}`;
