import type { catalogV1 } from '@marketplace/proto';
import { DEFAULT_CURRENCY, isAppError } from '@marketplace/platform';
import { CATEGORY_NAMES, isCategory } from '@marketplace/vocabulary';
import type { CatalogClient } from './catalog.client.js';
import type { Principal } from '../../edge/account.js';
import type { ProductDetails, ProductSummary, ProductViews } from '../../edge/product.views.js';

/** A catalog search with prices already in cents. */
export interface CatalogSearch {
  readonly query?: string | undefined;
  readonly category?: string | undefined;
  readonly condition?: string | undefined;
  readonly minPriceCents?: number | undefined;
  readonly maxPriceCents?: number | undefined;
  /** Whole percent 0-100 off the original retail price. */
  readonly minDiscountPercent?: number | undefined;
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

/** GET /api/ucp/catalog/categories (docs/specification.md, "Listings"); also the MCP categories resource. */
export interface CategoryList {
  readonly categories: readonly {
    readonly id: string;
    readonly name: string;
    readonly product_count: number;
  }[];
}

/** A recommended unit price for a lot, with its range and how it was reached; cents. */
export interface PricingRecommendation {
  readonly recommended_unit_price: number;
  readonly low_unit_price: number;
  readonly high_unit_price: number;
  readonly currency: string;
  readonly basis: {
    readonly condition_recovery_rate: number;
    readonly comparable_listings: number;
    readonly comparable_median_ratio: number | null;
    readonly applied_ratio: number;
    readonly lot_size_factor: number;
    readonly explanation: string;
  };
}

/** A semantic search (docs/specification.md, "Catalog endpoints", search_inventory_semantic); price in cents. */
export interface SemanticCatalogSearch {
  readonly query: string;
  readonly category?: string | undefined;
  readonly condition?: string | undefined;
  readonly maxPriceCents?: number | undefined;
  readonly limit: number;
}

/** A search result with how close in meaning it is to the query: cosine similarity in [0, 1]. */
export interface SemanticProductMatch extends ProductSummary {
  readonly similarity: number;
}

/** POST /api/ucp/catalog/search and search_inventory_semantic: most similar first. */
export interface SemanticProductMatches {
  readonly products: readonly SemanticProductMatch[];
}

/** One page of every public listing (ACP feed, sitemap): product number order; `next_cursor` null at the end. */
export interface PublicProductPage {
  readonly products: readonly ProductDetails[];
  readonly next_cursor: string | null;
}

/** The marketplace://stats figures: public listings, in stock or not, by category and by condition. */
export interface CatalogStatistics {
  readonly public_products: number;
  readonly public_in_stock_products: number;
  readonly by_category: readonly StatisticsRow[];
  readonly by_condition: readonly StatisticsRow[];
}

export interface StatisticsRow {
  readonly id: string;
  readonly public_products: number;
  readonly public_in_stock_products: number;
}

export interface PricingRequest {
  readonly category: string;
  readonly condition: string;
  readonly originalRetailCents: number;
  readonly quantity?: number | undefined;
}

/** Four decimals say all a ranking needs and keep the JSON short; 0 and 1 stay exact. */
const roundSimilarity = (similarity: number): number => Math.round(similarity * 10_000) / 10_000;

/** Catalog reads shared by REST and, later, the MCP tools. */
export class CatalogQueries {
  constructor(
    private readonly catalog: CatalogClient,
    private readonly views: ProductViews,
  ) {}

  async search(search: CatalogSearch): Promise<ProductPage> {
    const { products, total } = await this.searchProducts(search);
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

  /** The same search with each product's details (UCP catalog search, docs/protocols.md §2.4). */
  async searchDetails(
    search: CatalogSearch,
  ): Promise<{ readonly products: readonly ProductDetails[]; readonly total: number }> {
    const { products, total } = await this.searchProducts(search);
    return { products: products.map((product) => this.views.detailsOf(product)), total };
  }

  private searchProducts(search: CatalogSearch): Promise<catalogV1.SearchProductsResponse> {
    return this.catalog.searchProducts({
      query: search.query ?? '',
      category: search.category,
      condition: search.condition,
      minPriceCents: search.minPriceCents,
      maxPriceCents: search.maxPriceCents,
      minDiscountPercent: search.minDiscountPercent,
      limit: search.limit,
      offset: search.offset,
    });
  }

  /**
   * The public listings among `productIds` (well-formed ids), keyed by id: an id that names no listing, or one
   * not promoted, is left out (UCP lookup answers what it found).
   */
  async publicDetails(productIds: readonly string[]): Promise<Map<string, ProductDetails>> {
    const found = await Promise.all(
      productIds.map(async (productId) => {
        try {
          return [productId, await this.details(productId, undefined)] as const;
        } catch (error) {
          if (isAppError(error) && error.kind === 'not_found') return undefined;
          throw error;
        }
      }),
    );
    return new Map(found.filter((entry) => entry !== undefined));
  }

  /** A seller also sees its own listings that were not promoted; everyone else gets not_found for those. */
  async details(productId: string, viewer: Principal | undefined): Promise<ProductDetails> {
    const product = await this.catalog.getProduct({
      productId,
      viewerAccountId: viewer?.role === 'seller' ? viewer.accountId : undefined,
    });
    return this.views.detailsOf(product);
  }

  async categories(): Promise<CategoryList> {
    const counts = await this.catalog.listCategories();
    return {
      categories: counts.map(({ id, productCount }) => ({
        id,
        name: isCategory(id) ? CATEGORY_NAMES[id] : id,
        product_count: productCount,
      })),
    };
  }

  async semanticSearch(search: SemanticCatalogSearch): Promise<SemanticProductMatches> {
    const matches = await this.catalog.semanticSearch({
      query: search.query,
      category: search.category,
      condition: search.condition,
      maxPriceCents: search.maxPriceCents,
      limit: search.limit,
    });
    return {
      products: matches.flatMap(({ product, similarity }) =>
        product ? [{ ...this.views.summaryOf(product), similarity: roundSimilarity(similarity) }] : [],
      ),
    };
  }

  /** `cursor` is absent for the first page, else the previous page's `next_cursor`; `limit` 1-200. */
  async publicProducts(cursor: string | undefined, limit: number): Promise<PublicProductPage> {
    const page = await this.catalog.listPublicProducts({ cursor: cursor ?? '', limit });
    return {
      products: page.products.map((product) => this.views.detailsOf(product)),
      next_cursor: page.nextCursor === '' ? null : page.nextCursor,
    };
  }

  async statistics(): Promise<CatalogStatistics> {
    const stats = await this.catalog.getCatalogStats();
    const rowOf = (row: catalogV1.CatalogStatsCount): StatisticsRow => ({
      id: row.id,
      public_products: row.publicProducts,
      public_in_stock_products: row.publicInStockProducts,
    });
    return {
      public_products: stats.publicProducts,
      public_in_stock_products: stats.publicInStockProducts,
      by_category: stats.byCategory.map(rowOf),
      by_condition: stats.byCondition.map(rowOf),
    };
  }

  async pricingRecommendation(request: PricingRequest): Promise<PricingRecommendation> {
    const { recommendedUnitPriceCents, lowUnitPriceCents, highUnitPriceCents, basis } =
      await this.catalog.recommendPrice(request);
    if (!basis) throw new Error('RecommendPrice answered without a basis');
    return {
      recommended_unit_price: recommendedUnitPriceCents,
      low_unit_price: lowUnitPriceCents,
      high_unit_price: highUnitPriceCents,
      currency: DEFAULT_CURRENCY,
      basis: {
        condition_recovery_rate: basis.conditionRecoveryRate,
        comparable_listings: basis.comparableListings,
        comparable_median_ratio: basis.comparableMedianRatio ?? null,
        applied_ratio: basis.appliedRatio,
        lot_size_factor: basis.lotSizeFactor,
        explanation: basis.explanation,
      },
    };
  }
}
