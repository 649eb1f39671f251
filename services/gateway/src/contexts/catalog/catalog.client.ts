import { catalogV1 } from '@marketplace/proto';
import type { GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';

/** The gateway's view of the catalog (read side): one method per RPC it uses, failures as AppErrors. */
export interface CatalogClient {
  searchProducts(request: catalogV1.SearchProductsRequest): Promise<catalogV1.SearchProductsResponse>;
  getProduct(request: catalogV1.GetProductRequest): Promise<catalogV1.Product>;
  listCategories(): Promise<catalogV1.CategoryCount[]>;
  recommendPrice(request: catalogV1.RecommendPriceRequest): Promise<catalogV1.RecommendPriceResponse>;
  semanticSearch(request: catalogV1.SemanticSearchRequest): Promise<catalogV1.SemanticMatch[]>;
  listPublicProducts(
    request: catalogV1.ListPublicProductsRequest,
  ): Promise<catalogV1.ListPublicProductsResponse>;
  getCatalogStats(): Promise<catalogV1.GetCatalogStatsResponse>;
  /** Whether the product reached the version within the request's `timeoutMs` (the call's deadline is longer). */
  awaitProductVersion(request: catalogV1.AwaitProductVersionRequest): Promise<boolean>;
  close(): void;
}

/** An AwaitProductVersion call waits up to its timeout by design: its deadline leaves the answer this long on top. */
const AWAIT_ANSWER_MARGIN_MS = 2_000;

// The catalog only reads: any call may go to another replica.
const REPEATABLE = Object.values(catalogV1.CatalogServiceDefinition.methods).map((method) => method.name);

export const createCatalogClient = (address: string, options?: GrpcClientOptions): CatalogClient => {
  const grpc = createGrpcClient(catalogV1.CatalogServiceDefinition, address, {
    ...options,
    repeatableMethods: REPEATABLE,
  });
  const { client } = grpc;
  return {
    searchProducts: (request) => client.searchProducts(request),
    getProduct: async (request) => {
      const { product } = await client.getProduct(request);
      if (!product) throw new Error('GetProduct answered without a product');
      return product;
    },
    listCategories: async () => (await client.listCategories({})).categories,
    recommendPrice: (request) => client.recommendPrice(request),
    semanticSearch: async (request) => (await client.semanticSearch(request)).matches,
    listPublicProducts: (request) => client.listPublicProducts(request),
    getCatalogStats: () => client.getCatalogStats({}),
    awaitProductVersion: async (request) =>
      (await client.awaitProductVersion(request, { deadline: request.timeoutMs + AWAIT_ANSWER_MARGIN_MS }))
        .applied,
    close: () => grpc.close(),
  };
};
