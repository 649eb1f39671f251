import type { catalogV1 } from '@marketplace/proto';
import { catalogV1 as catalog } from '@marketplace/proto';
import type { GrpcService } from '@marketplace/rpc';
import { signalAbortedOnTerminate } from '@marketplace/rpc';
import type { AwaitProductVersionInput } from '../application/await-product-version.query.js';
import type { GetProductInput, ProductWithSeller } from '../application/get-product.query.js';
import type { CatalogStats } from '../application/catalog-stats.query.js';
import type { CategoryCount } from '../application/list-categories.query.js';
import type {
  ListPublicProductsInput,
  PublicProductPageWithSellers,
} from '../application/list-public-products.query.js';
import type { RecommendPriceInput } from '../application/recommend-price.query.js';
import type { ProductPage, SearchProductsInput } from '../application/search-products.query.js';
import type { SemanticMatch, SemanticSearchInput } from '../application/semantic-search.query.js';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { availabilityOf } from '../domain/catalog-product.js';
import { discountPercentOf } from '../domain/discount.js';
import type { PriceRecommendation } from '../domain/pricing-recommendation.js';
import type { SellerProfile } from '../domain/seller-profile.js';

/** The application functions the gRPC API exposes. */
export interface CatalogApplication {
  searchProducts(input: SearchProductsInput): Promise<ProductPage>;
  getProduct(input: GetProductInput): Promise<ProductWithSeller>;
  listCategories(): Promise<CategoryCount[]>;
  recommendPrice(input: RecommendPriceInput): Promise<PriceRecommendation>;
  semanticSearch(input: SemanticSearchInput): Promise<SemanticMatch[]>;
  listPublicProducts(input: ListPublicProductsInput): Promise<PublicProductPageWithSellers>;
  catalogStats(): Promise<CatalogStats>;
  awaitProductVersion(input: AwaitProductVersionInput, signal: AbortSignal): Promise<boolean>;
}

/** A product as the API sends it; `seller` only where the caller reads one product (details). */
export const toProductMessage = (product: CatalogProduct, seller?: SellerProfile): catalogV1.Product => ({
  id: product.id,
  title: product.title,
  description: product.description,
  priceCents: product.priceCents,
  currency: product.currency,
  availability: availabilityOf(product),
  quantityAvailable: product.quantity,
  imageUrls: [...product.imageUrls],
  category: product.category,
  condition: product.condition,
  brand: product.brand,
  sku: product.sku,
  originalRetailPriceCents: product.originalRetailPriceCents,
  minOrderQuantity: product.minOrderQuantity,
  minQuoteQuantity: product.minQuoteQuantity,
  instantCheckout: product.instantCheckout,
  shipping: product.shipping && {
    mode: product.shipping.mode,
    cents: product.shipping.cents,
    shipFromRegion: product.shipping.shipFromRegion,
  },
  promotePublicly: product.promotePublicly,
  sellerAccountId: product.sellerAccountId,
  createdAtMs: product.createdAtMs,
  updatedAtMs: product.updatedAtMs,
  discountPercent: discountPercentOf(product),
  seller: seller && { name: seller.name, company: seller.company, country: seller.country },
  version: product.version,
});

/** CatalogService over gRPC: messages ⇄ application inputs; AppErrors become statuses in @marketplace/rpc. */
export const catalogGrpcService = (
  application: CatalogApplication,
): GrpcService<catalogV1.CatalogServiceDefinition> => ({
  definition: catalog.CatalogServiceDefinition,
  implementation: {
    async searchProducts(request) {
      const { products, total } = await application.searchProducts({
        query: request.query,
        category: request.category,
        condition: request.condition,
        minPriceCents: request.minPriceCents,
        maxPriceCents: request.maxPriceCents,
        minDiscountPercent: request.minDiscountPercent,
        limit: request.limit,
        offset: request.offset,
      });
      return { products: products.map((product) => toProductMessage(product)), total };
    },
    async getProduct(request) {
      const { product, seller } = await application.getProduct({
        productId: request.productId,
        viewer: { sellerAccountId: request.viewerAccountId },
      });
      return { product: toProductMessage(product, seller) };
    },
    async listCategories() {
      return { categories: await application.listCategories() };
    },
    async recommendPrice(request) {
      const { basis, ...prices } = await application.recommendPrice({
        category: request.category,
        condition: request.condition,
        originalRetailCents: request.originalRetailCents,
        quantity: request.quantity,
      });
      return { ...prices, basis };
    },
    async semanticSearch(request) {
      const matches = await application.semanticSearch({
        query: request.query,
        category: request.category,
        condition: request.condition,
        maxPriceCents: request.maxPriceCents,
        limit: request.limit,
      });
      return {
        matches: matches.map(({ product, similarity }) => ({
          product: toProductMessage(product),
          similarity,
        })),
      };
    },
    async listPublicProducts(request) {
      const { products, nextCursor } = await application.listPublicProducts({
        cursor: request.cursor,
        limit: request.limit,
      });
      return {
        products: products.map(({ product, seller }) => toProductMessage(product, seller)),
        nextCursor,
      };
    },
    async getCatalogStats() {
      const { byCategory, byCondition, ...totals } = await application.catalogStats();
      return { ...totals, byCategory: [...byCategory], byCondition: [...byCondition] };
    },
    async awaitProductVersion(request, context) {
      // A shutdown answers the wait (false) instead of holding the drain until its bound.
      return { applied: await application.awaitProductVersion(request, signalAbortedOnTerminate(context)) };
    },
  },
});
