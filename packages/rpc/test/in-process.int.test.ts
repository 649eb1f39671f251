import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError, isAppError } from '@marketplace/platform';
import { catalogV1, listingV1 } from '@marketplace/proto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Metadata, Status, type CallContext } from 'nice-grpc';
import { pino } from 'pino';
import {
  createGrpcClient,
  IN_PROCESS_HOST,
  startGrpcServer,
  waitForServing,
  type GrpcServer,
  type ServingStatus,
} from '../src/index.js';
import { catalog, catchError, KINDS, listing, product } from './support/services.js';

const logger = pino({ level: 'silent' });

/** What the last call's handler saw besides its request. */
let seen: { metadata: Record<string, string | undefined>; callerStore: unknown; signal?: AbortSignal } = {
  metadata: {},
  callerStore: undefined,
};
const callerContext = new AsyncLocalStorage<string>();

const observed = {
  ...catalog,
  async getProduct(request: catalogV1.GetProductRequest, context: CallContext) {
    seen = {
      metadata: {
        authorization: context.metadata.get('authorization'),
        note: context.metadata.get('x-note'),
      },
      callerStore: callerContext.getStore(),
      signal: context.signal,
    };
    return catalog.getProduct(request, context);
  },
} satisfies catalogV1.CatalogServiceImplementation;

const start = (initialStatus?: ServingStatus): Promise<GrpcServer> =>
  startGrpcServer({
    host: IN_PROCESS_HOST,
    port: 0,
    services: [
      { definition: catalogV1.CatalogServiceDefinition, implementation: observed },
      { definition: listingV1.ListingServiceDefinition, implementation: listing },
    ],
    logger,
    serviceName: 'test',
    ...(initialStatus === undefined ? {} : { initialStatus }),
  });

describe('a gRPC server served in process', () => {
  let server: GrpcServer;
  let catalogClient: ReturnType<typeof createGrpcClient<typeof catalogV1.CatalogServiceDefinition>>;
  let listingClient: ReturnType<typeof createGrpcClient<typeof listingV1.ListingServiceDefinition>>;

  beforeAll(async () => {
    server = await start();
    catalogClient = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address);
    listingClient = createGrpcClient(listingV1.ListingServiceDefinition, server.address);
  });
  afterAll(async () => {
    catalogClient.close();
    listingClient.close();
    await server.shutdown(1_000);
  });

  it('has an address of its own that no socket serves', () => {
    expect(server.address).toMatch(/^in-process:\d+$/);
  });

  it('hands the handler the decoded message, not the caller’s object, and the caller a decoded answer', async () => {
    const draft = {
      name: 'Returned headphones',
      galleryImageUrls: ['a.jpg'],
      priceCents: 2_599,
      notAField: 'dropped on the wire',
    };
    const { listing: created } = await listingClient.client.createListing({ sellerAccountId: 42, draft });
    expect(created).toEqual(
      listingV1.Listing.decode(
        listingV1.Listing.encode(
          listingV1.Listing.fromPartial({
            productId: 'product_8',
            sellerAccountId: 42,
            name: 'Returned headphones',
            galleryImageUrls: ['a.jpg'],
            priceCents: 2_599,
            createdAtMs: 1_767_225_600_123,
            version: 1,
          }),
        ).finish(),
      ),
    );
    expect(created?.galleryImageUrls).not.toBe(draft.galleryImageUrls);
    expect(created?.originalRetailPriceCents).toBeUndefined();
    expect((await catalogClient.client.getProduct({ productId: product.id })).product).toEqual(product);
  });

  // The CLIENT span's traceparent travels in the metadata too (runner/test/work-budget.int.test.ts follows it).
  it('sends the caller’s metadata and the service token, and runs the handler outside the caller’s context', async () => {
    await callerContext.run('the caller’s transaction', () =>
      catalogClient.client.getProduct(
        { productId: product.id },
        { metadata: Metadata({ 'x-note': 'kept' }) },
      ),
    );
    expect(seen.metadata.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(seen.metadata.note).toBe('kept');
    expect(seen.callerStore).toBeUndefined();
  });

  it('refuses text PostgreSQL cannot store before the method runs', async () => {
    const error = await catchError(
      listingClient.client.createListing({
        sellerAccountId: 42,
        draft: { name: 'Kettles\u0000', galleryImageUrls: [], priceCents: 2_599 },
      }),
    );
    expect(error).toMatchObject({ kind: 'validation', violations: [{ path: 'draft/name' }] });
  });

  it('carries a validation AppError with its field violations', async () => {
    const error = await catchError(catalogClient.client.getProduct({ productId: 'invalid' }));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      kind: 'validation',
      message: 'the product id is malformed',
      violations: [
        { path: 'productId', message: 'must look like product_<n>' },
        { path: 'viewerAccountId', message: 'must be positive' },
      ],
    });
  });

  it.each(KINDS)('restores a %s AppError with the same kind and message', async (kind) => {
    const restored = await catchError(catalogClient.client.getProduct({ productId: `kind:${kind}` }));
    expect(restored).toBeInstanceOf(AppError);
    expect(restored).toMatchObject({ kind, message: `failed with ${kind}`, violations: [] });
  });

  it('answers an unexpected error with a bare INTERNAL', async () => {
    const error = await catchError(catalogClient.client.getProduct({ productId: 'crash' }));
    expect(isAppError(error)).toBe(false);
    expect(error).toMatchObject({ code: Status.INTERNAL, details: 'internal error' });
    expect(JSON.stringify(error)).not.toContain('s3cret');
  });

  it('fails a passed deadline as unavailable (DEADLINE_EXCEEDED) and aborts the handler’s signal', async () => {
    const impatient = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address, {
      deadlineMs: 50,
    });
    try {
      const startedAt = performance.now();
      const error = await catchError(impatient.client.getProduct({ productId: 'endless' }));
      expect(performance.now() - startedAt).toBeLessThan(1_000);
      expect(error).toMatchObject({ kind: 'unavailable' });
      expect((error as AppError).message).toContain('DEADLINE_EXCEEDED');
      expect(seen.signal?.aborted).toBe(true);
      const patient = await impatient.client.getProduct({ productId: 'slow' }, { deadline: 2_000 });
      expect(patient.product?.id).toBe(product.id);
    } finally {
      impatient.close();
    }
  });

  it('rejects at once with an AbortError when the caller aborts', async () => {
    const controller = new AbortController();
    const call = catchError(
      catalogClient.client.getProduct({ productId: 'endless' }, { signal: controller.signal }),
    );
    await sleep(20);
    controller.abort();
    expect(await call).toMatchObject({ name: 'AbortError' });
    expect(seen.signal?.aborted).toBe(true);
  });

  it('refuses a message over gRPC’s 4 MiB bound as a socket would (RESOURCE_EXHAUSTED)', async () => {
    const error = await catchError(
      catalogClient.client.getProduct({ productId: 'x'.repeat(4 * 1024 * 1024 + 1) }),
    );
    expect(error).toMatchObject({ kind: 'payload_too_large' });
  });

  it('reports an address nothing serves, and a closed client, as unavailable', async () => {
    const nowhere = createGrpcClient(catalogV1.CatalogServiceDefinition, `${IN_PROCESS_HOST}:999999`);
    expect(await catchError(nowhere.client.searchProducts({ query: 'x' }))).toMatchObject({
      kind: 'unavailable',
      message: '/marketplace.catalog.v1.CatalogService/SearchProducts failed: UNAVAILABLE',
    });
    const closed = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address);
    closed.close();
    expect(await catchError(closed.client.searchProducts({ query: 'x' }))).toMatchObject({
      kind: 'unavailable',
    });
  });
});

describe('waitForServing in process', () => {
  it('follows the server’s health, overall and per service', async () => {
    const server = await start('NOT_SERVING');
    try {
      const error = await catchError(waitForServing(server.address, { timeoutMs: 200 }));
      expect((error as AppError).message).toContain('last answer: NOT_SERVING');
      setTimeout(() => server.setServing('SERVING'), 100);
      await waitForServing(server.address, { timeoutMs: 5_000 });
      await waitForServing(server.address, {
        timeoutMs: 1_000,
        service: catalogV1.CatalogServiceDefinition.fullName,
      });
    } finally {
      await server.shutdown(1_000);
    }
  });
});

describe('shutdown in process', () => {
  it('drains an in-flight call, then refuses new ones', async () => {
    const server = await start();
    const client = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address);
    try {
      const inFlight = client.client.getProduct({ productId: 'slow' });
      await sleep(50);
      const stopped = server.shutdown(5_000);
      await expect(inFlight).resolves.toMatchObject({ product: { id: product.id } });
      await stopped;
      await expect(client.client.getProduct({ productId: product.id })).rejects.toMatchObject({
        kind: 'unavailable',
      });
    } finally {
      client.close();
    }
  });

  it('cancels what still runs after the bound', async () => {
    const server = await start();
    const client = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address, {
      deadlineMs: 30_000,
    });
    try {
      const stuck = catchError(client.client.getProduct({ productId: 'endless' }));
      await sleep(50);
      const startedAt = performance.now();
      await server.shutdown(200);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      expect(await stuck).toMatchObject({ kind: 'unavailable' });
      expect(seen.signal?.aborted).toBe(true);
    } finally {
      client.close();
    }
  });
});
