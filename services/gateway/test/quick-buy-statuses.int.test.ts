import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { AppError, conflict, forbidden, notFound, unavailable, validationError } from '@marketplace/platform';
import { orderV1 } from '@marketplace/proto';
import type { GrpcServer } from '@marketplace/rpc';
import { startGrpcServer } from '@marketplace/rpc';
import { rateLimitConfigSchema } from '../src/edge/http/rate-limit.config.js';
import { problemSchema } from '../src/edge/discovery/openapi.describe.js';
import { ADMIN_TOKEN, CapturedLog, TestGateway, type Answer, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

/**
 * Every answer `quick_buy` can get through `POST /api/mcp/invoke` (and `/api/mcp/stream`, which answers a
 * failure the same way before any event) is documented there in /openapi.json, with the
 * Problem schema for the refusals: the gateway's own refusals (parameters, credential, rate limit) and each
 * error kind the order service can answer, 409 (not enough stock) and 503 (a service or connection lost)
 * included, and the order service being unreachable. The order service is a stub over real gRPC that answers
 * each product id with one outcome, so the test sees the gateway's mapping as it runs in production.
 */

type Outcome = () => never;

/** What the stub order service answers for each product id: product_1 an order, the others an error. */
const OUTCOMES: readonly { readonly name: string; readonly status: number; readonly outcome?: Outcome }[] = [
  { name: 'an order', status: 200 },
  {
    name: 'not enough stock (conflict)',
    status: 409,
    outcome: () => {
      throw conflict('only 0 units of product_2 are left');
    },
  },
  {
    name: 'the listing service unavailable during the reservation',
    status: 503,
    outcome: () => {
      throw unavailable('the listing service is not available');
    },
  },
  {
    name: 'no such listing',
    status: 404,
    outcome: () => {
      throw notFound('no listing product_4');
    },
  },
  {
    name: 'the key used for another request',
    status: 422,
    outcome: () => {
      throw new AppError(
        'idempotency_conflict',
        'idempotency_conflict: the key was used for another request',
      );
    },
  },
  {
    name: 'a line the service refuses',
    status: 400,
    outcome: () => {
      throw validationError('invalid quick_buy', [{ path: 'quantity', message: 'must be at most 99' }]);
    },
  },
  {
    name: 'a buyer the service refuses',
    status: 403,
    outcome: () => {
      throw forbidden('this buyer may not buy');
    },
  },
];

const productOf = (index: number): string => `product_${index + 1}`;

const placedOrder = (request: orderV1.QuickBuyRequest): orderV1.QuickBuyResponse =>
  orderV1.QuickBuyResponse.fromPartial({
    checkoutId: 'checkout_00000000-0000-4000-8000-000000000001',
    order: {
      orderId: 1,
      checkoutId: 'checkout_00000000-0000-4000-8000-000000000001',
      productId: request.productId,
      productName: 'Pallet of earbuds',
      sellerAccountId: 7,
      buyerAccountId: request.buyerAccountId,
      buyer: request.buyer,
      quantity: request.quantity,
      unitPriceCents: 1_250,
      totalCents: 1_250 * request.quantity,
      currency: 'USD',
      status: 'awaiting_shipment',
      paymentTerms: 'net_30',
      placedAtMs: Date.UTC(2026, 0, 1),
      shipByMs: Date.UTC(2026, 0, 4),
    },
  });

const notServed = async (): Promise<never> => {
  throw unavailable('not served by the stub order service');
};

/** An order service whose QuickBuy answers OUTCOMES by product id; its other methods are not called here. */
const startStubOrderService = (logger: CapturedLog['logger']): Promise<GrpcServer> => {
  const implementation: orderV1.OrderServiceImplementation = {
    quickBuy: async (request) => {
      const index = Number(request.productId.replace('product_', '')) - 1;
      OUTCOMES[index]?.outcome?.();
      return placedOrder(request);
    },
    createCheckout: notServed,
    completeCheckout: notServed,
    getCheckout: notServed,
    updateCheckout: notServed,
    cancelCheckout: notServed,
    getBuyerOrder: notServed,
    confirmOrder: notServed,
    openDispute: notServed,
    markShipped: notServed,
    markDelivered: notServed,
    getSellerOrders: notServed,
    sellerAttention: notServed,
    countOrdersSince: notServed,
    listBuyerOrders: notServed,
    listSellerOrders: notServed,
    cancelOrder: notServed,
    listDisputes: notServed,
    resolveDispute: notServed,
  };
  return startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    serviceName: 'stub-order',
    services: [{ definition: orderV1.OrderServiceDefinition, implementation }],
  });
};

interface DocumentedResponse {
  readonly content?: Record<string, { schema?: unknown }>;
}

// One engine: the gateway's database only holds the accounts here; what is tested is the HTTP edge.
const [engine] = testEngines();

describe.each(['/api/mcp/invoke', '/api/mcp/stream'])(
  'quick_buy through POST %s answers only what /openapi.json documents',
  (route) => {
    let db: Database;
    let backends: InMemoryBackends;
    let orders: GrpcServer;
    let gateway: TestGateway;
    let limited: TestGateway;
    let seller: { apiKey: string };
    let buyer: { apiKey: string };
    /** A buyer of the second gateway (each gateway has its own accounts). */
    let limitedBuyer: { apiKey: string };
    let documented: Record<string, DocumentedResponse>;
    const seen = new Set<number>();

    beforeAll(async () => {
      db = await engine!.create();
      const log = new CapturedLog();
      backends = await InMemoryBackends.start(log.logger);
      orders = await startStubOrderService(log.logger);
      const services = { ...backendsAt(backends.address), order: orders.address };
      gateway = await TestGateway.start(db, { services, adminToken: ADMIN_TOKEN }, log);
      // A second gateway whose MCP allowance is one call a minute per key, for the 429.
      limited = await TestGateway.start(
        db,
        {
          services,
          adminToken: ADMIN_TOKEN,
          rateLimits: rateLimitConfigSchema.parse({ RATE_LIMIT_CATALOG_PER_KEY: '1' }),
        },
        log,
      );
      seller = await gateway.createAccount('seller');
      buyer = await gateway.createAccount('buyer');
      limitedBuyer = await limited.createAccount('buyer');
      const { status, body } = await gateway.call('/openapi.json');
      expect(status).toBe(200);
      const paths = (body as { paths: Record<string, Record<string, { responses: object }>> }).paths;
      documented = paths[route]!['post']!.responses as Record<string, DocumentedResponse>;
    }, 60_000);

    afterAll(async () => {
      await limited?.stop();
      await gateway?.stop();
      await orders?.shutdown(1_000).catch(() => undefined);
      await backends?.stop();
      await db?.close();
    });

    const quickBuy = (
      on: TestGateway,
      parameters: Record<string, unknown>,
      headers: Record<string, string> = { 'X-MCP-API-Key': buyer.apiKey },
    ): Promise<Answer> =>
      on.postJson(
        route,
        {
          tool: 'quick_buy',
          parameters: { quantity: 1, buyer_email: 'buyer@example.test', ...parameters },
        },
        headers,
      );

    /** The status is documented for the operation, and a refusal is a problem document of the Problem schema. */
    const expectDocumented = (answer: Answer, status: number): void => {
      expect({ status: answer.status, body: answer.body }).toMatchObject({ status });
      seen.add(answer.status);
      expect(Object.keys(documented)).toContain(String(status));
      if (status === 200) return;
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(documented[String(status)]?.content?.['application/problem+json']?.schema).toEqual({
        $ref: '#/components/schemas/Problem',
      });
      expect(problemSchema.parse(answer.body).status).toBe(status);
      // The retryable refusals say when to retry.
      if (status === 429 || status === 503) expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
    };

    it.each(OUTCOMES.map((outcome, index) => ({ ...outcome, index })))(
      'documents the $status of $name',
      async ({ index, status }) => {
        expectDocumented(await quickBuy(gateway, { product_id: productOf(index) }), status);
      },
    );

    it('documents the gateway’s own refusals: parameters, key mismatch, credential, role, rate limit', async () => {
      expectDocumented(await quickBuy(gateway, { product_id: 'not-a-product' }), 400);
      expectDocumented(
        await quickBuy(
          gateway,
          { product_id: productOf(0), idempotency_key: 'one' },
          { 'X-MCP-API-Key': buyer.apiKey, 'Idempotency-Key': 'another' },
        ),
        400,
      );
      expectDocumented(await quickBuy(gateway, { product_id: productOf(0) }, {}), 401);
      expectDocumented(
        await quickBuy(gateway, { product_id: productOf(0) }, { 'X-MCP-API-Key': 'lmk_forged_key' }),
        401,
      );
      expectDocumented(
        await quickBuy(gateway, { product_id: productOf(0) }, { 'X-MCP-API-Key': seller.apiKey }),
        403,
      );
      const limitedKey = { 'X-MCP-API-Key': limitedBuyer.apiKey };
      expectDocumented(await quickBuy(limited, { product_id: productOf(0) }, limitedKey), 200);
      expectDocumented(await quickBuy(limited, { product_id: productOf(0) }, limitedKey), 429);
    });

    it('documents the 503 of an order service that cannot be reached', async () => {
      await orders.shutdown(1_000);
      expectDocumented(await quickBuy(gateway, { product_id: productOf(0) }), 503);
    });

    it('saw 409 and 503 among the answers, each documented', () => {
      expect([...seen].sort()).toEqual([200, 400, 401, 403, 404, 409, 422, 429, 503]);
    });
  },
);
