import { DEFAULT_CURRENCY } from '@marketplace/platform';
import { CATEGORY_NAMES, isCategory } from '@marketplace/vocabulary';
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

/** GET /api/ucp/catalog/categories (decisions, "Listings"); also the MCP categories resource. */
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

export interface PricingRequest {
  readonly category: string;
  readonly condition: string;
  readonly originalRetailCents: number;
  readonly quantity?: number | undefined;
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
      minDiscountPercent: search.minDiscountPercent,
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
