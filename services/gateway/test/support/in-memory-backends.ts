import type { Logger } from '@marketplace/platform';
import {
  AppError,
  formatProductId,
  notFound,
  preconditionFailed,
  unavailable,
  validationError,
} from '@marketplace/platform';
import { catalogV1, listingV1 } from '@marketplace/proto';
import type { GrpcServer } from '@marketplace/rpc';
import { startGrpcServer } from '@marketplace/rpc';

/** A product id the test catalog fails on unexpectedly, to see how the gateway answers a real fault. */
export const FAULTY_PRODUCT_ID = 'product_999999';

/** An idempotency key the test listing service says was used for another listing. */
export const CONFLICTING_IDEMPOTENCY_KEY = 'used-for-another-listing';

/** The order service's methods: no gateway route calls them. */
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
  /** Every UpdateListing, SetQuantity and BulkUpdateListings request received. */
  readonly updateRequests: listingV1.UpdateListingRequest[] = [];
  readonly quantityRequests: listingV1.SetQuantityRequest[] = [];
  readonly bulkRequests: listingV1.BulkUpdateListingsRequest[] = [];
  readonly shippingRequests: listingV1.SetListingShippingRequest[] = [];
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
      updateListing: async (request) => backends.update(request),
      setQuantity: async (request) => backends.setQuantity(request),
      bulkUpdateListings: async (request) => backends.bulkUpdate(request),
      reserveStock: notServedHere,
      releaseStock: notServedHere,
      listSellerListings: notServedHere,
      withdrawListing: notServedHere,
      relistListing: notServedHere,
      setListingShipping: async (request) => backends.setShipping(request),
      bulkUpsertListings: notServedHere,
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
      awaitProductVersion: notServedHere,
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
    if (request.idempotencyKey === CONFLICTING_IDEMPOTENCY_KEY) {
      throw new AppError(
        'idempotency_conflict',
        'idempotency_conflict: the key was used for another listing',
      );
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

  /** The seller's own listing, as the listing service finds it (404 none and another seller's alike). */
  private owned(productId: string, sellerAccountId: number): listingV1.Listing {
    const listing = this.listings.find((candidate) => candidate.productId === productId);
    if (listing?.sellerAccountId !== sellerAccountId) throw notFound(`listing ${productId} does not exist`);
    return listing;
  }

  private replace(listing: listingV1.Listing): { listing: listingV1.Listing } {
    this.listings[this.listings.findIndex(({ productId }) => productId === listing.productId)] = listing;
    return { listing };
  }

  /** Applies the fields sent; the rules of changes are the listing service's and tested there. */
  private update(request: listingV1.UpdateListingRequest): listingV1.UpdateListingResponse {
    this.updateRequests.push(request);
    const listing = this.owned(request.productId, request.sellerAccountId);
    const sent = Object.entries(request.changes ?? {}).filter(([, value]) => value !== undefined);
    return this.replace({ ...listing, ...Object.fromEntries(sent), version: listing.version + 1 });
  }

  private setQuantity(request: listingV1.SetQuantityRequest): listingV1.SetQuantityResponse {
    this.quantityRequests.push(request);
    const listing = this.owned(request.productId, request.sellerAccountId);
    return this.replace({ ...listing, quantity: request.quantity, version: listing.version + 1 });
  }

  /** Sets the terms as sent, honouring match_versions as the listing service does (its rules are tested there). */
  private setShipping(request: listingV1.SetListingShippingRequest): listingV1.SetListingShippingResponse {
    this.shippingRequests.push(request);
    const listing = this.owned(request.productId, request.sellerAccountId);
    if (request.matchVersions.length > 0 && !request.matchVersions.includes(listing.version)) {
      throw preconditionFailed(`listing ${listing.productId} is at version ${listing.version}`);
    }
    return this.replace({ ...listing, shipping: request.shipping, version: listing.version + 1 });
  }

  /** Reports other sellers' and unknown listings as the listing service does; changes nothing itself. */
  private bulkUpdate(request: listingV1.BulkUpdateListingsRequest): listingV1.BulkUpdateListingsResponse {
    this.bulkRequests.push(request);
    const response: listingV1.BulkUpdateListingsResponse = { updated: [], failures: [] };
    for (const productId of request.productIds) {
      try {
        response.updated.push(this.owned(productId, request.sellerAccountId));
      } catch (error) {
        response.failures.push({ productId, reason: 'not_found', message: (error as AppError).message });
      }
    }
    return response;
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
