import type { CatalogProduct } from './catalog-product.js';

/** Who is looking: a signed-in seller's account id, or nobody in particular (anonymous, buyers, agents). */
export interface Viewer {
  readonly sellerAccountId?: number;
}

export const ANONYMOUS_VIEWER: Viewer = {};

type VisibilityFacts = Pick<CatalogProduct, 'promotePublicly' | 'sellerAccountId'>;

/**
 * The visibility rule (docs/specification.md, "Service", docs/specification.md, "Listings"), in one place for every catalog surface: a listing
 * reaches public and agent-facing surfaces (search, feeds, sitemap, saved-search matches) only when its
 * seller promoted it publicly; its own seller always sees it; to everyone else it does not exist.
 */
export const isPublic = (product: VisibilityFacts): boolean => product.promotePublicly;

export const isVisibleTo = (product: VisibilityFacts, viewer: Viewer): boolean =>
  isPublic(product) || product.sellerAccountId === viewer.sellerAccountId;
