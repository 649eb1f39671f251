import { AppError, validationError, type ErrorKind } from '@marketplace/platform';
import { catalogV1, type listingV1 } from '@marketplace/proto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Status, type CallContext } from 'nice-grpc';

/** The services both transports' tests serve: behaviour chosen by the request. */
export const product = catalogV1.Product.fromPartial({
  id: 'product_7',
  title: 'Pallet of returned headphones',
  priceCents: 125_000,
  currency: 'USD',
  imageUrls: ['https://img.example/1.jpg', 'https://img.example/2.jpg'],
  originalRetailPriceCents: 900_000,
  sellerAccountId: 42,
  createdAtMs: 1_767_225_600_000,
});

export const STATUS_OF_KIND: Record<ErrorKind, Status> = {
  validation: Status.INVALID_ARGUMENT,
  unauthenticated: Status.UNAUTHENTICATED,
  forbidden: Status.PERMISSION_DENIED,
  not_found: Status.NOT_FOUND,
  conflict: Status.ABORTED,
  rate_limited: Status.RESOURCE_EXHAUSTED,
  unavailable: Status.UNAVAILABLE,
  payload_too_large: Status.RESOURCE_EXHAUSTED,
  idempotency_conflict: Status.ALREADY_EXISTS,
  precondition_failed: Status.FAILED_PRECONDITION,
};
export const KINDS = Object.keys(STATUS_OF_KIND) as ErrorKind[];

/** A catalog whose behaviour is chosen by the requested product id. */
export const catalog = {
  async getProduct({ productId }: catalogV1.GetProductRequest, { signal }: CallContext) {
    if (productId === product.id) return { product };
    if (productId === 'invalid') {
      throw validationError('the product id is malformed', [
        { path: 'productId', message: 'must look like product_<n>' },
        { path: 'viewerAccountId', message: 'must be positive' },
      ]);
    }
    if (productId === 'crash') throw new Error('connect ECONNREFUSED postgres://catalog:s3cret@db:5432');
    if (productId === 'slow') {
      await sleep(300, undefined, { signal });
      return { product };
    }
    if (productId === 'endless') {
      await sleep(60_000, undefined, { signal });
      return { product };
    }
    const kind = productId.replace('kind:', '') as ErrorKind;
    throw new AppError(kind, `failed with ${kind}`);
  },
  async searchProducts() {
    return { products: [product], total: 1 };
  },
  async listCategories() {
    return { categories: [] };
  },
  async recommendPrice() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async semanticSearch() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async listPublicProducts() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async getCatalogStats() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async awaitProductVersion() {
    throw new AppError('unavailable', 'not called by these tests');
  },
} satisfies catalogV1.CatalogServiceImplementation;

export const listing = {
  async createListing({ sellerAccountId, draft }: listingV1.CreateListingRequest) {
    return {
      listing: {
        productId: 'product_8',
        sellerAccountId,
        name: draft?.name ?? '',
        galleryImageUrls: draft?.galleryImageUrls ?? [],
        priceCents: draft?.priceCents ?? 100,
        originalRetailPriceCents: draft?.originalRetailPriceCents,
        createdAtMs: 1_767_225_600_123,
        version: 1,
      },
    };
  },
  async getListing() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async updateListing() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async setQuantity() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async bulkUpdateListings() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async reserveStock() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async releaseStock() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async listSellerListings() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async withdrawListing() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async relistListing() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async setListingShipping() {
    throw new AppError('unavailable', 'not called by these tests');
  },
  async bulkUpsertListings() {
    throw new AppError('unavailable', 'not called by these tests');
  },
} satisfies listingV1.ListingServiceImplementation;

export const catchError = async (call: Promise<unknown>): Promise<unknown> =>
  call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
