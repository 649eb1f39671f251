import { migrate } from '@marketplace/database';
import type { Embedder } from '@marketplace/embeddings';
import type { ServiceHandle } from '@marketplace/platform';
import type { ServiceDependencies } from '@marketplace/runtime';
import { serveGrpcService } from '@marketplace/rpc';
import { catalogMigrations } from './adapters/catalog.migrations.js';
import { ProductVersionWaits } from './adapters/product-version-waits.js';
import { productsTable } from './adapters/products.table.js';
import { openSearchIndex } from './adapters/search-backend.js';
import type { SearchBackend } from './adapters/search-backend.js';
import { startSearchProjection } from './adapters/search-projection.runner.js';
import { createSemanticIndexer } from './adapters/semantic-indexer.js';
import { startSellerProjection } from './adapters/seller-projection.runner.js';
import { sellersTable } from './adapters/sellers.table.js';
import { awaitProductVersion } from './application/await-product-version.query.js';
import { getProductWithSeller } from './application/get-product.query.js';
import { catalogStats } from './application/catalog-stats.query.js';
import { listCategories } from './application/list-categories.query.js';
import { listPublicProductsWithSellers } from './application/list-public-products.query.js';
import { recommendPriceFor } from './application/recommend-price.query.js';
import { searchProducts } from './application/search-products.query.js';
import { semanticSearch } from './application/semantic-search.query.js';
import { catalogGrpcService } from './transport/catalog.grpc.js';

const SERVICE_NAME = 'catalog';

export interface CatalogServiceOptions extends ServiceDependencies {
  /** The PostgreSQL schema the service owns; default `catalog` (tests use a fresh one). */
  readonly schema?: string;
  /** Default `embedded` (see `adapters/search-backend.ts`). */
  readonly searchBackend?: SearchBackend;
  /**
   * Embeds listings (in the projection) and semantic queries; absent: no semantic search, which then answers
   * `unavailable` (EMBEDDINGS_PROVIDER=none; see `createEmbedder` of @marketplace/embeddings).
   */
  readonly embedder?: Embedder;
}

export interface CatalogServiceHandle extends ServiceHandle {
  /** Empties the catalog and replays the listing and account topics from the beginning (README, "Rebuild"). */
  rebuild(): Promise<void>;
}

/**
 * Starts the catalog: brings its schema up to date, loads the search index from the products table, consumes
 * listing events (group `catalog-search-projection`) and account events (`catalog-seller-projection`),
 * then serves gRPC. Ready once all of that is done; `stop()` drains the gRPC calls, then closes the
 * log consumers and the index.
 */
export const startCatalogService = async (options: CatalogServiceOptions): Promise<CatalogServiceHandle> => {
  const { db, log } = options;
  const schema = options.schema ?? SERVICE_NAME;
  const logger = options.logger.child({ service: SERVICE_NAME });

  await migrate(db, schema, catalogMigrations);
  // Embedded: in a worker thread, because a query of very common words costs seconds at 100k listings and must
  // not stall gRPC, health checks and the projection (README, "The event loop").
  const searchIndex = await openSearchIndex(options.searchBackend ?? { kind: 'embedded' }, options.embedder);
  const { index, semantic } = searchIndex;
  const versionWaits = new ProductVersionWaits();
  const products = productsTable(schema);
  const projection = await startSearchProjection({
    db,
    log,
    versionWaits,
    schema,
    index,
    semantic: semantic && createSemanticIndexer({ db, schema, logger, ...semantic }),
    logger,
  }).catch(async (error: unknown) => {
    await searchIndex.close();
    throw error;
  });
  const sellerProjection = await startSellerProjection({ db, log, schema, logger }).catch(
    async (error: unknown) => {
      await projection.stop();
      await searchIndex.close();
      throw error;
    },
  );
  const closeReadSide = async (): Promise<void> => {
    await sellerProjection.stop();
    await projection.stop();
    await searchIndex.close();
  };
  const sellers = sellersTable(schema);
  // The server drains first, then the log consumers close (their messages in hand finish and are committed).
  const handle = await serveGrpcService({
    host: options.grpc.host,
    port: options.grpc.port,
    services: [
      catalogGrpcService({
        searchProducts: (input) => searchProducts(index, input),
        getProduct: (input) =>
          getProductWithSeller(
            (id) => products.find(db, id),
            (accountId) => sellers.find(db, accountId),
            input,
          ),
        listCategories: () => listCategories(() => products.countPublicInStockByCategory(db)),
        semanticSearch: (input) => semanticSearch(semantic, input),
        listPublicProducts: (input) =>
          listPublicProductsWithSellers(
            (afterNumber, limit) => products.pagePublicByNumber(db, afterNumber, limit),
            (accountId) => sellers.find(db, accountId),
            input,
          ),
        catalogStats: () => catalogStats(() => products.countPublicByCategoryAndCondition(db)),
        awaitProductVersion: (input, signal) =>
          awaitProductVersion(
            (request, timeoutMs, waitSignal) =>
              versionWaits.wait(request, timeoutMs, waitSignal, () => products.find(db, request.productId)),
            input,
            signal,
          ),
        recommendPrice: (input) =>
          recommendPriceFor(
            (category, condition, limit) => products.priceToRetailRatios(db, category, condition, limit),
            input,
          ),
      }),
    ],
    logger,
    serviceName: SERVICE_NAME,
    isCaughtUp: () => projection.isRunning() && sellerProjection.isRunning() && searchIndex.isAlive(),
    afterServerStopped: closeReadSide,
  }).catch(async (error: unknown) => {
    await closeReadSide();
    throw error;
  });
  return {
    ...handle,
    rebuild: async () => {
      await Promise.all([projection.rebuild(), sellerProjection.rebuild()]);
    },
  };
};
