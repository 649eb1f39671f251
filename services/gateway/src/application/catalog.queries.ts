import type { CatalogClient } from '../clients/catalog.client.js';
import type { Principal } from '../domain/account.js';
import type { ProductDetails, ProductSummary, ProductViews } from './product.views.js';

/** A catalog search with prices already in cents. */
export interface CatalogSearch {
  readonly query?: string | undefined;
  readonly category?: string | undefined;
  readonly condition?: string | undefined;
  readonly minPriceCents?: number | undefined;
  readonly maxPriceCents?: number | undefined;
  readonly limit: number;
  readonly offset: number;
}

export interface ProductPage {
  readonly products: readonly ProductSummary[];
  readonly pagination: {
    readonly total: number;
    readonly limit: number;
    readonly offset: number;
    readonly has_more: boolean;
  };
}

/** Catalog reads shared by REST and, later, the MCP tools. */
export class CatalogQueries {
  constructor(
    private readonly catalog: CatalogClient,
    private readonly views: ProductViews,
  ) {}

  async search(search: CatalogSearch): Promise<ProductPage> {
    const { products, total } = await this.catalog.searchProducts({
      query: search.query ?? '',
      category: search.category,
      condition: search.condition,
      minPriceCents: search.minPriceCents,
      maxPriceCents: search.maxPriceCents,
      limit: search.limit,
      offset: search.offset,
    });
    return {
      products: products.map((product) => this.views.summaryOf(product)),
      pagination: {
        total,
        limit: search.limit,
        offset: search.offset,
        has_more: search.offset + products.length < total,
      },
    };
  }

  /** A seller also sees its own listings that were not promoted; everyone else gets not_found for those. */
  async details(productId: string, viewer: Principal | undefined): Promise<ProductDetails> {
    const product = await this.catalog.getProduct({
      productId,
      viewerAccountId: viewer?.role === 'seller' ? viewer.accountId : undefined,
    });
    return this.views.detailsOf(product);
  }
}
