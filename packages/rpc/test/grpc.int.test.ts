import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError, isAppError } from '@marketplace/platform';
import { catalogV1, listingV1 } from '@marketplace/proto';
import { createServer as createNetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { ClientError, Metadata, Status, createChannel, createClient } from 'nice-grpc';
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
} from '../src/index.js';
import { catalog, catchError, KINDS, listing, product, STATUS_OF_KIND } from './support/services.js';

const LISTING_SERVICE = listingV1.ListingServiceDefinition.fullName;
const CATALOG_SERVICE = catalogV1.CatalogServiceDefinition.fullName;
// Known to the test, so its raw client (without our middleware) can sign a service token too.
const INTERNAL_KEY = randomBytes(32);
configureInternalAuth({ key: INTERNAL_KEY, caller: 'rpc-test' });

const logLines: Array<Record<string, unknown>> = [];
const logger = pino(
  { level: 'debug' },
  { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) },
);

const start = (initialStatus?: ServingStatus): Promise<GrpcServer> =>
  startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    services: [
      { definition: catalogV1.CatalogServiceDefinition, implementation: catalog },
      { definition: listingV1.ListingServiceDefinition, implementation: listing },
    ],
    logger,
    serviceName: 'test',
    ...(initialStatus === undefined ? {} : { initialStatus }),
  });

const healthOf = async (address: string, service: string) => {
  const channel = createChannel(address);
  try {
    const { status } = await createClient(HealthDefinition, channel).check(
      { service },
      { signal: AbortSignal.timeout(2_000) },
    );
    return HealthCheckResponse_ServingStatus[status];
  } finally {
    channel.close();
  }
};

/** A loopback port nothing listens on (bound, then released). */
const freePort = async (): Promise<number> => {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
};

describe('a gRPC server and client', () => {
  let server: GrpcServer;
  let catalogClient: ReturnType<typeof createGrpcClient<typeof catalogV1.CatalogServiceDefinition>>;
  let rawChannel: ReturnType<typeof createChannel>;

  beforeAll(async () => {
    server = await start();
    catalogClient = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address);
    rawChannel = createChannel(server.address);
  });
  afterAll(async () => {
    catalogClient.close();
    rawChannel.close();
    await server.shutdown(1_000);
  });

  it('binds an ephemeral loopback port and returns its address', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.address).toBe(`127.0.0.1:${server.port}`);
  });

  it('round-trips requests and responses, nested messages, 64-bit numbers and optional fields included', async () => {
    const listingClient = createGrpcClient(listingV1.ListingServiceDefinition, server.address);
    try {
      const { listing: created } = await listingClient.client.createListing({
        sellerAccountId: 42,
        draft: { name: 'Returned headphones', galleryImageUrls: ['a.jpg', 'b.jpg'], priceCents: 2_599 },
      });
      expect(created).toMatchObject({
        productId: 'product_8',
        sellerAccountId: 42,
        name: 'Returned headphones',
        galleryImageUrls: ['a.jpg', 'b.jpg'],
        priceCents: 2_599,
        createdAtMs: 1_767_225_600_123,
        version: 1,
      });
      expect(created?.originalRetailPriceCents).toBeUndefined();
    } finally {
      listingClient.close();
    }
    const found = await catalogClient.client.getProduct({ productId: product.id });
    expect(found.product).toEqual(product);
  });

  it('refuses a request holding text PostgreSQL cannot store, naming each field, before the method runs', async () => {
    const listingClient = createGrpcClient(listingV1.ListingServiceDefinition, server.address);
    try {
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
    } finally {
      listingClient.close();
    }
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
    const raw = await catchError(
      createClient(catalogV1.CatalogServiceDefinition, rawChannel).getProduct(
        { productId: `kind:${kind}` },
        { metadata: Metadata({ authorization: `Bearer ${token}` }) },
      ),
    );
    expect(raw).toBeInstanceOf(ClientError);
    expect((raw as ClientError).code).toBe(STATUS_OF_KIND[kind]);

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

  it('reports a passed deadline as an unavailable AppError, and a call may extend its deadline', async () => {
    const impatient = createGrpcClient(catalogV1.CatalogServiceDefinition, server.address, {
      deadlineMs: 50,
    });
    try {
      const startedAt = performance.now();
      const error = await catchError(impatient.client.getProduct({ productId: 'slow' }));
      expect(performance.now() - startedAt).toBeLessThan(1_000);
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ kind: 'unavailable' });
      expect((error as AppError).message).toContain('DEADLINE_EXCEEDED');

      const patient = await impatient.client.getProduct({ productId: 'slow' }, { deadline: 2_000 });
      expect(patient.product?.id).toBe(product.id);
    } finally {
      impatient.close();
    }
  });

  it('reports an unreachable server as an unavailable AppError without its socket error in the message', async () => {
    const nowhere = createGrpcClient(catalogV1.CatalogServiceDefinition, `127.0.0.1:${await freePort()}`);
    try {
      const error = await catchError(nowhere.client.searchProducts({ query: 'headphones' }));
      expect(error).toMatchObject({ kind: 'unavailable' });
      expect((error as AppError).message).toBe(
        '/marketplace.catalog.v1.CatalogService/SearchProducts failed: UNAVAILABLE',
      );
    } finally {
      nowhere.close();
    }
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

describe('waitForServing', () => {
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
    } finally {
      await server.shutdown(1_000);
    }
  });

  it('waits for a server that is not listening yet', async () => {
    const port = await freePort();
    const late = sleep(400).then(() =>
      startGrpcServer({
        host: '127.0.0.1',
        port,
        services: [{ definition: catalogV1.CatalogServiceDefinition, implementation: catalog }],
        logger,
        serviceName: 'late',
      }),
    );
    try {
      await waitForServing(`127.0.0.1:${port}`, { timeoutMs: 5_000, service: CATALOG_SERVICE });
    } finally {
      await (await late).shutdown(1_000);
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

describe('createServingProbe', () => {
  it('answers every check over its kept channel as the status changes, and again once a restarted server is back', async () => {
    const port = await freePort();
    const serve = () =>
      startGrpcServer({
        host: '127.0.0.1',
        port,
        services: [{ definition: catalogV1.CatalogServiceDefinition, implementation: catalog }],
        logger,
        serviceName: 'probed',
      });
    let server = await serve();
    const probe = createServingProbe(`127.0.0.1:${port}`);
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
      server = await serve();
      // It reconnects as often as it polls: a check as long as the gateway's (1 s), with room for a loaded machine.
      await probe.waitForServing({ timeoutMs: 2_000 });
    } finally {
      probe.close();
      await server.shutdown(1_000);
    }
  });
});

describe('shutdown', () => {
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

  it('cancels what still runs after the bound', async () => {
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
    } finally {
      client.close();
    }
  });

  it('ends health Watch streams instead of waiting for them', async () => {
    const server = await start();
    const channel = createChannel(server.address);
    try {
      const updates = createClient(HealthDefinition, channel).watch({ service: '' })[Symbol.asyncIterator]();
      expect((await updates.next()).value).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
      const startedAt = performance.now();
      await server.shutdown(10_000);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      const drained = (async () => {
        for (;;) if ((await updates.next()).done === true) return 'ended';
      })();
      await expect(drained).rejects.toMatchObject({ code: Status.CANCELLED });
    } finally {
      channel.close();
    }
  });
});
