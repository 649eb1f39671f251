import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError, isAppError } from '@marketplace/platform';
import { catalogV1, listingV1 } from '@marketplace/proto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ClientError,
  Metadata,
  Status,
  type CallContext,
  type Client,
  type TsProtoServiceDefinition,
} from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health.js';
import { pino } from 'pino';
import {
  configureInternalAuth,
  createGrpcClient,
  createServingProbe,
  signInternalToken,
  startGrpcServer,
  waitForServing,
  type GrpcServer,
  type ServingStatus,
  signalAbortedOnTerminate,
} from '../../src/index.js';
import { catalog, catchError, KINDS, listing, product, STATUS_OF_KIND } from './services.js';

/** One way calls reach a server: what the contract below needs to know of it. */
export interface Transport {
  /** Names the transport in the suite's titles. */
  readonly name: string;
  /** The host `startGrpcServer` is given. */
  readonly host: string;
  /** A client without our interceptor, as any gRPC client of the server would call it. */
  readonly rawClient: <Definition extends TsProtoServiceDefinition>(
    definition: Definition,
    address: string,
  ) => { readonly client: Client<Definition>; readonly close: () => void };
  /** An address no server answers at. */
  readonly unreachableAddress: () => Promise<string>;
  /**
   * When a cancelled call's handler sees its signal abort: in process before the caller gets its error; over a
   * socket once the cancellation has crossed it, a moment later.
   */
  readonly handlerAborts: 'before the caller returns' | 'a moment later';
}

const LISTING_SERVICE = listingV1.ListingServiceDefinition.fullName;
export const CATALOG_SERVICE = catalogV1.CatalogServiceDefinition.fullName;
// Known to the suite, so its raw clients (without our middleware) can sign a service token too.
const INTERNAL_KEY = randomBytes(32);
configureInternalAuth({ key: INTERNAL_KEY, caller: 'rpc-test' });

const logLines: Array<Record<string, unknown>> = [];
const logger = pino(
  { level: 'debug' },
  { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) },
);

/** What the last call's handler saw besides its request. */
let seen: { metadata: Record<string, string | undefined>; callerStore: unknown; signal?: AbortSignal } = {
  metadata: {},
  callerStore: undefined,
};
const callerContext = new AsyncLocalStorage<string>();

const observedCatalog = {
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
  // A long poll: answers only when its signal aborts, which a shutdown does at once for a handler that asks.
  async awaitProductVersion(_request: catalogV1.AwaitProductVersionRequest, context: CallContext) {
    const signal = signalAbortedOnTerminate(context);
    if (!signal.aborted) await once(signal, 'abort');
    return { applied: false };
  },
} satisfies catalogV1.CatalogServiceImplementation;

/** A server of the test catalog (which records what its handler saw) and listing on `host`. */
export const startTestServer = (
  host: string,
  { port = 0, initialStatus }: { port?: number; initialStatus?: ServingStatus } = {},
): Promise<GrpcServer> =>
  startGrpcServer({
    host,
    port,
    services: [
      { definition: catalogV1.CatalogServiceDefinition, implementation: observedCatalog },
      { definition: listingV1.ListingServiceDefinition, implementation: listing },
    ],
    logger,
    serviceName: 'test',
    ...(initialStatus === undefined ? {} : { initialStatus }),
  });

/**
 * What a server and its clients do the same whichever transport carries the calls (in-process.ts promises the
 * in-process one behaves as gRPC over a socket): the cases each transport's test file runs.
 */
export const describeTransportContract = (transport: Transport): void => {
  const start = (initialStatus?: ServingStatus): Promise<GrpcServer> =>
    startTestServer(transport.host, initialStatus === undefined ? {} : { initialStatus });

  /** Resolves once the last call's handler saw its signal abort, when the transport says it does. */
  const handlerAborted = async (): Promise<void> => {
    const signal = seen.signal;
    expect(signal).toBeDefined();
    if (transport.handlerAborts === 'a moment later' && signal?.aborted === false) {
      await once(signal, 'abort', { signal: AbortSignal.timeout(1_000) });
    }
    expect(signal?.aborted).toBe(true);
  };

  const healthOf = async (address: string, service: string) => {
    const { client, close } = transport.rawClient(HealthDefinition, address);
    try {
      const { status } = await client.check({ service }, { signal: AbortSignal.timeout(2_000) });
      return HealthCheckResponse_ServingStatus[status];
    } finally {
      close();
    }
  };

  describe(`a gRPC server and client (${transport.name})`, () => {
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

    it('round-trips requests and responses as decoded messages, nested messages, 64-bit numbers and optional fields included', async () => {
      const draft = {
        name: 'Returned headphones',
        galleryImageUrls: ['a.jpg', 'b.jpg'],
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
              galleryImageUrls: ['a.jpg', 'b.jpg'],
              priceCents: 2_599,
              createdAtMs: 1_767_225_600_123,
              version: 1,
            }),
          ).finish(),
        ),
      );
      // The handler got the decoded message, not the caller's object, and answered with its own array.
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

    it('refuses a request holding text PostgreSQL cannot store, naming each field, before the method runs', async () => {
      const error = await catchError(
        listingClient.client.createListing({
          sellerAccountId: 42,
          // (A lone surrogate does not cross the wire: UTF-8 encoding replaces it with U+FFFD.)
          draft: { name: 'Kettles\u0000', galleryImageUrls: ['a.jpg', 'b\u0000.jpg'], priceCents: 2_599 },
        }),
      );
      expect(isAppError(error)).toBe(true);
      expect(error).toMatchObject({
        kind: 'validation',
        violations: [
          { path: 'draft/name', message: expect.stringContaining('NUL') },
          { path: 'draft/galleryImageUrls/1', message: expect.stringContaining('NUL') },
        ],
      });
      // Right-to-left and combining marks are text like any other.
      const { listing: created } = await listingClient.client.createListing({
        sellerAccountId: 42,
        draft: { name: 'קומקום\u200f e\u0301', galleryImageUrls: [], priceCents: 2_599 },
      });
      expect(created).toBeDefined();
    });

    it('carries a validation AppError with its field violations across the hop', async () => {
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

    it.each(KINDS)('sends a %s AppError as its status code and restores the same kind', async (kind) => {
      const token = await signInternalToken(INTERNAL_KEY, {
        caller: 'rpc-test',
        audience: CATALOG_SERVICE,
        issuedAtMs: Date.now(),
      });
      const raw = transport.rawClient(catalogV1.CatalogServiceDefinition, server.address);
      try {
        const error = await catchError(
          raw.client.getProduct(
            { productId: `kind:${kind}` },
            { metadata: Metadata({ authorization: `Bearer ${token}` }) },
          ),
        );
        expect(error).toBeInstanceOf(ClientError);
        expect((error as ClientError).code).toBe(STATUS_OF_KIND[kind]);
      } finally {
        raw.close();
      }

      const restored = await catchError(catalogClient.client.getProduct({ productId: `kind:${kind}` }));
      expect(restored).toBeInstanceOf(AppError);
      expect(restored).toMatchObject({ kind, message: `failed with ${kind}`, violations: [] });
    });

    it('answers an unexpected error with a bare INTERNAL and logs it on the server', async () => {
      const error = await catchError(catalogClient.client.getProduct({ productId: 'crash' }));
      expect(isAppError(error)).toBe(false);
      expect(error).toMatchObject({ code: Status.INTERNAL, details: 'internal error' });
      expect(JSON.stringify(error)).not.toContain('s3cret');
      expect(logLines).toContainEqual(
        expect.objectContaining({
          level: 50,
          method: '/marketplace.catalog.v1.CatalogService/GetProduct',
          err: expect.objectContaining({ message: expect.stringContaining('ECONNREFUSED') }),
        }),
      );
    });

    it('reports a passed deadline as an unavailable AppError (DEADLINE_EXCEEDED) and aborts the handler’s signal, and a call may extend its deadline', async () => {
      const impatient = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address, {
        deadlineMs: 50,
      });
      try {
        const startedAt = performance.now();
        const error = await catchError(impatient.client.getProduct({ productId: 'endless' }));
        expect(performance.now() - startedAt).toBeLessThan(1_000);
        expect(error).toBeInstanceOf(AppError);
        expect(error).toMatchObject({ kind: 'unavailable' });
        expect((error as AppError).message).toContain('DEADLINE_EXCEEDED');
        await handlerAborted();

        const patient = await impatient.client.getProduct({ productId: 'slow' }, { deadline: 2_000 });
        expect(patient.product?.id).toBe(product.id);
      } finally {
        impatient.close();
      }
    });

    it('rejects at once with an AbortError when the caller aborts, and aborts the handler’s signal', async () => {
      const controller = new AbortController();
      const call = catchError(
        catalogClient.client.getProduct({ productId: 'endless' }, { signal: controller.signal }),
      );
      await sleep(20);
      controller.abort();
      expect(await call).toMatchObject({ name: 'AbortError' });
      await handlerAborted();
    });

    it('refuses a message over gRPC’s 4 MiB bound (RESOURCE_EXHAUSTED)', async () => {
      const error = await catchError(
        catalogClient.client.getProduct({ productId: 'x'.repeat(4 * 1024 * 1024 + 1) }),
      );
      expect(error).toMatchObject({ kind: 'payload_too_large' });
    });

    it('reports an unreachable server as unavailable without the transport’s error in the message', async () => {
      const nowhere = createGrpcClient(
        catalogV1.CatalogServiceDefinition,
        await transport.unreachableAddress(),
      );
      try {
        expect(await catchError(nowhere.client.searchProducts({ query: 'headphones' }))).toMatchObject({
          kind: 'unavailable',
          message: '/marketplace.catalog.v1.CatalogService/SearchProducts failed: UNAVAILABLE',
        });
      } finally {
        nowhere.close();
      }
    });

    it('fails a call on a closed client as unavailable', async () => {
      const closed = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address);
      closed.close();
      expect(await catchError(closed.client.searchProducts({ query: 'headphones' }))).toMatchObject({
        kind: 'unavailable',
      });
    });

    it('reports health overall and per service, and follows setServing', async () => {
      for (const service of ['', CATALOG_SERVICE, LISTING_SERVICE]) {
        expect(await healthOf(server.address, service)).toBe('SERVING');
      }
      server.setServing('NOT_SERVING');
      try {
        for (const service of ['', CATALOG_SERVICE, LISTING_SERVICE]) {
          expect(await healthOf(server.address, service)).toBe('NOT_SERVING');
        }
      } finally {
        server.setServing('SERVING');
      }
      expect(await healthOf(server.address, '')).toBe('SERVING');
      await expect(healthOf(server.address, 'marketplace.nothing.v1.NoService')).rejects.toMatchObject({
        code: Status.NOT_FOUND,
      });
    });
  });

  describe(`waitForServing (${transport.name})`, () => {
    it('resolves at once for a serving server and its services', async () => {
      const server = await start();
      try {
        await waitForServing(server.address, { timeoutMs: 2_000 });
        await waitForServing(server.address, { timeoutMs: 2_000, service: LISTING_SERVICE });
      } finally {
        await server.shutdown(1_000);
      }
    });

    it('waits for a server that turns SERVING later', async () => {
      const server = await start('NOT_SERVING');
      try {
        setTimeout(() => server.setServing('SERVING'), 300);
        const startedAt = performance.now();
        await waitForServing(server.address, { timeoutMs: 5_000 });
        expect(performance.now() - startedAt).toBeGreaterThanOrEqual(250);
        await waitForServing(server.address, { timeoutMs: 1_000, service: CATALOG_SERVICE });
      } finally {
        await server.shutdown(1_000);
      }
    });

    it('gives up after its timeout with an unavailable AppError naming the last answer', async () => {
      const server = await start('NOT_SERVING');
      try {
        const startedAt = performance.now();
        const error = await catchError(waitForServing(server.address, { timeoutMs: 1_000 }));
        expect(performance.now() - startedAt).toBeLessThan(3_000);
        expect(error).toMatchObject({ kind: 'unavailable' });
        expect((error as AppError).message).toContain('last answer: NOT_SERVING');
      } finally {
        await server.shutdown(1_000);
      }
    });
  });

  describe(`createServingProbe (${transport.name})`, () => {
    it('answers every check over its kept client as the status changes, and unavailable once the server stopped', async () => {
      const server = await start();
      const probe = createServingProbe(server.address);
      try {
        await probe.waitForServing({ timeoutMs: 2_000 });
        server.setServing('NOT_SERVING');
        expect(((await catchError(probe.waitForServing({ timeoutMs: 300 }))) as AppError).message).toContain(
          'last answer: NOT_SERVING',
        );
        server.setServing('SERVING');
        await probe.waitForServing({ timeoutMs: 1_000 });

        await server.shutdown(1_000);
        expect(await catchError(probe.waitForServing({ timeoutMs: 300 }))).toMatchObject({
          kind: 'unavailable',
        });
      } finally {
        probe.close();
        await server.shutdown(1_000);
      }
    });
  });

  describe(`shutdown (${transport.name})`, () => {
    it('drains an in-flight call, then refuses new ones', async () => {
      const server = await start();
      const client = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address);
      try {
        const inFlight = client.client.getProduct({ productId: 'slow' });
        await sleep(100);
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

    it('aborts at once the signal of a handler that asked for it (a long poll), so the drain does not wait for the bound', async () => {
      const server = await start();
      const client = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address);
      try {
        const waiting = client.client.awaitProductVersion({
          productId: product.id,
          minVersion: 1,
          sellerAccountId: 1,
          timeoutMs: 10_000,
        });
        await sleep(100);
        const startedAt = performance.now();
        await server.shutdown(5_000);
        expect(performance.now() - startedAt).toBeLessThan(2_000);
        await expect(waiting).resolves.toEqual({ applied: false });
      } finally {
        client.close();
      }
    });

    it('cancels what still runs after the bound, aborting its handler’s signal', async () => {
      const server = await start();
      const client = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address, {
        deadlineMs: 30_000,
      });
      try {
        const stuck = catchError(client.client.getProduct({ productId: 'endless' }));
        await sleep(100);
        const startedAt = performance.now();
        await server.shutdown(200);
        expect(performance.now() - startedAt).toBeLessThan(2_000);
        expect(await stuck).toMatchObject({ kind: 'unavailable' });
        await handlerAborted();
      } finally {
        client.close();
      }
    });
  });
};
