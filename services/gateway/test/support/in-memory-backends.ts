import type { Logger } from '@marketplace/platform';
import { formatProductId, notFound, unavailable, validationError } from '@marketplace/platform';
import { catalogV1, listingV1 } from '@marketplace/proto';
import type { GrpcServer } from '@marketplace/rpc';
import { startGrpcServer } from '@marketplace/rpc';

/** A product id the test catalog fails on unexpectedly, to see how the gateway answers a real fault. */
export const FAULTY_PRODUCT_ID = 'product_999999';

/** The routes behind these methods are tested against the real listing service (listing-routes.int.test.ts). */
const notServedHere = async (): Promise<never> => {
  throw unavailable('not served by the in-memory backends');
};

/**
 * Test implementations of the listing and catalog services behind one real gRPC server on loopback, so the
 * gateway is tested alone, over the wire it uses in production. Listings live in memory; the catalog shows
 * the promoted ones (and, to their seller, the others) at once.
 */
export class InMemoryBackends {
  readonly listings: listingV1.Listing[] = [];
  /** Every CreateListing request received, to check what the gateway sent. */
  readonly createRequests: listingV1.CreateListingRequest[] = [];
  /** Every RecommendPrice request received; the answer is half the retail price, to see it mapped. */
  readonly recommendPriceRequests: catalogV1.RecommendPriceRequest[] = [];

  private server: GrpcServer | undefined;

  private constructor() {}

  get address(): string {
    if (!this.server) throw new Error('backends not started');
    return this.server.address;
  }

  static async start(logger: Logger): Promise<InMemoryBackends> {
    const backends = new InMemoryBackends();
    const listing: listingV1.ListingServiceImplementation = {
      createListing: async (request) => backends.create(request),
      getListing: notServedHere,
      updateListing: notServedHere,
      setQuantity: notServedHere,
      bulkUpdateListings: notServedHere,
      reserveStock: notServedHere,
      releaseStock: notServedHere,
    };
    const catalog: catalogV1.CatalogServiceImplementation = {
      searchProducts: async (request) => backends.search(request),
      getProduct: async (request) => backends.get(request),
      listCategories: async () => backends.categories(),
      recommendPrice: async (request) => backends.recommendPrice(request),
      // As a catalog configured with EMBEDDINGS_PROVIDER=none answers (semantic search: catalog and e2e tests).
      semanticSearch: async () => {
        throw unavailable(
          'semantic search is not configured: the catalog runs without an embedding provider',
        );
      },
      listPublicProducts: notServedHere,
      getCatalogStats: notServedHere,
    };
    backends.server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      serviceName: 'test-backends',
      services: [
        { definition: listingV1.ListingServiceDefinition, implementation: listing },
        { definition: catalogV1.CatalogServiceDefinition, implementation: catalog },
      ],
    });
    return backends;
  }

  async stop(): Promise<void> {
    await this.server?.shutdown(1_000);
  }

  private create(request: listingV1.CreateListingRequest): listingV1.CreateListingResponse {
    this.createRequests.push(request);
    const draft = request.draft ?? listingV1.ListingDraft.fromPartial({});
    // One rule of the real service, to see its violations reach the client.
    if (draft.priceCents !== undefined && draft.priceCents <= 0) {
      throw validationError('invalid listing', [{ path: 'price', message: 'must be greater than 0' }]);
    }
    const productId = formatProductId(this.listings.length + 1);
    const listing = listingV1.Listing.fromPartial({
      ...draft,
      productId,
      sellerAccountId: request.sellerAccountId,
      sku: draft.sku ?? `SKU-${this.listings.length + 1}`,
      category: draft.category ?? 'electronics',
      priceCents: draft.priceCents ?? 100,
      currency: 'USD',
      quantity: draft.quantity ?? 1,
      minOrderQuantity: draft.minOrderQuantity ?? 1,
      minQuoteQuantity: draft.minQuoteQuantity ?? 1,
      createdAtMs: 1_767_225_600_000,
      updatedAtMs: 1_767_225_600_000,
      version: 1,
    });
    this.listings.push(listing);
    return { listing };
  }

  private search(request: catalogV1.SearchProductsRequest): catalogV1.SearchProductsResponse {
    const words = request.query.toLowerCase();
    const matching = this.listings.filter(
      (listing) =>
        listing.promotePublicly &&
        `${listing.name} ${listing.description}`.toLowerCase().includes(words) &&
        (request.category === undefined || listing.category === request.category),
    );
    return {
      products: matching.slice(request.offset, request.offset + request.limit).map(productOf),
      total: matching.length,
    };
  }

  private get({ productId, viewerAccountId }: catalogV1.GetProductRequest): catalogV1.GetProductResponse {
    if (productId === FAULTY_PRODUCT_ID) throw new Error('catalog index corrupted at /var/lib/catalog');
    const listing = this.listings.find((candidate) => candidate.productId === productId);
    if (!listing || (!listing.promotePublicly && listing.sellerAccountId !== viewerAccountId)) {
      throw notFound(`no product ${productId}`);
    }
    return { product: productOf(listing) };
  }

  private categories(): catalogV1.ListCategoriesResponse {
    const counts = new Map<string, number>();
    for (const { category, promotePublicly, quantity } of this.listings) {
      if (promotePublicly && quantity > 0) counts.set(category, (counts.get(category) ?? 0) + 1);
    }
    return { categories: [...counts].map(([id, productCount]) => ({ id, productCount })) };
  }

  private recommendPrice(request: catalogV1.RecommendPriceRequest): catalogV1.RecommendPriceResponse {
    this.recommendPriceRequests.push(request);
    const half = Math.round(request.originalRetailCents / 2);
    return {
      recommendedUnitPriceCents: half,
      lowUnitPriceCents: half - 1,
      highUnitPriceCents: half + 1,
      basis: {
        conditionRecoveryRate: 0.5,
        comparableListings: 0,
        appliedRatio: 0.5,
        lotSizeFactor: 1,
        explanation: 'half of retail',
      },
    };
  }
}

const productOf = (listing: listingV1.Listing): catalogV1.Product =>
  catalogV1.Product.fromPartial({
    ...listing,
    id: listing.productId,
    title: listing.name,
    availability: listing.quantity > 0 ? 'in_stock' : 'out_of_stock',
    quantityAvailable: listing.quantity,
    imageUrls: [listing.imageUrl, ...listing.galleryImageUrls].filter((url) => url !== ''),
  });
