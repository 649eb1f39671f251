import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { ADMIN_TOKEN, CapturedLog, TestGateway, type Answer, backendsAt } from './support/gateway-harness.js';
import { CONFLICTING_IDEMPOTENCY_KEY, InMemoryBackends } from './support/in-memory-backends.js';

const listing = { name: 'Pallet of earbuds', description: 'Customer returns, tested', price: 12.5 };

const expectProblem = (answer: Answer, status: number, paths: string[] = []): void => {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const errors = (answer.body as { errors?: { path: string }[] }).errors ?? [];
  expect(errors.map(({ path }) => path).sort()).toEqual([...paths].sort());
};

describe.each(testEngines())('seller listing routes through the gateway on $name', ({ create }) => {
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;
  let seller: { accountId: number; apiKey: string };
  let other: { accountId: number; apiKey: string };
  let buyer: { accountId: number; apiKey: string };
  let productId: string;

  beforeAll(async () => {
    db = await create();
    const log = new CapturedLog();
    backends = await InMemoryBackends.start(log.logger);
    gateway = await TestGateway.start(
      db,
      { services: backendsAt(backends.address), adminToken: ADMIN_TOKEN },
      log,
    );
    seller = await gateway.createAccount('seller');
    other = await gateway.createAccount('seller', 'another seller');
    buyer = await gateway.createAccount('buyer');
    const created = await gateway.postJson('/api/products', listing, { 'X-MCP-API-Key': seller.apiKey });
    productId = (created.body as { id: string }).id;
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backends?.stop();
    await db?.close();
  });

  const send = (method: string, path: string, body: unknown, apiKey = seller.apiKey) =>
    gateway.call(path, {
      method,
      headers: { 'content-type': 'application/json', 'X-MCP-API-Key': apiKey },
      body: JSON.stringify(body),
    });

  it('PUT changes the fields sent, in cents, and answers the product', async () => {
    const answer = await send('PUT', `/api/products/${productId}`, {
      price: 9.99,
      brand: 'Zephyr',
      sku: null,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: productId, price: 999, brand: 'Zephyr' });
    expect(backends.updateRequests.at(-1)).toMatchObject({
      productId,
      sellerAccountId: seller.accountId,
      actor: { kind: 'seller', id: String(seller.accountId) },
      changes: { priceCents: 999, brand: 'Zephyr', sku: undefined, name: undefined },
    });
  });

  it('PUT refuses bad fields with their paths, stock included, and unknown fields', async () => {
    const answer = await send('PUT', `/api/products/${productId}`, {
      price: -90071992547409.92,
      category: 'spaceships',
      quantity: -3,
      colour: 'red',
    });
    expectProblem(answer, 400, ['price', 'category', 'quantity', 'colour']);
  });

  it('PUT answers 403 for another seller, 403 for a buyer, 404 for no listing, 401 without a key', async () => {
    expectProblem(await send('PUT', `/api/products/${productId}`, { price: 1 }, other.apiKey), 403);
    expectProblem(await send('PUT', `/api/products/${productId}`, { price: 1 }, buyer.apiKey), 403);
    expectProblem(await send('PUT', '/api/products/product_424242', { price: 1 }), 404);
    expectProblem(await send('PUT', '/api/products/whatever', { price: 1 }), 404);
    const anonymous = await gateway.call(`/api/products/${productId}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expectProblem(anonymous, 401);
  });

  it('PATCH quantity sets the stock; 0 is sold out', async () => {
    const answer = await send('PATCH', `/api/products/${productId}/quantity`, { quantity: 0 });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ quantity_available: 0, availability: 'out_of_stock' });
    expectProblem(await send('PATCH', `/api/products/${productId}/quantity`, { quantity: -1 }), 400, [
      'quantity',
    ]);
    expectProblem(await send('PATCH', `/api/products/${productId}/quantity`, {}), 400, ['quantity']);
    expectProblem(
      await send('PATCH', `/api/products/${productId}/quantity`, { quantity: 2 }, other.apiKey),
      403,
    );
  });

  it('bulk updates pass the mode and ids on, and report the listings left untouched', async () => {
    const price = await send('POST', '/api/products/bulk-update-price', {
      productIds: [productId, 424_242],
      mode: 'price_percent_decrease',
      value: 10,
    });
    expect(price.status).toBe(200);
    expect(price.body).toMatchObject({
      updated: [{ id: productId }],
      failures: [{ product_id: 'product_424242', reason: 'not_found' }],
    });
    expect(backends.bulkRequests.at(-1)).toMatchObject({
      productIds: [productId, 'product_424242'],
      mode: 'price_percent_decrease',
      value: 10,
    });
    const moq = await send('POST', '/api/products/bulk-update-moq', {
      productIds: [productId],
      minOrderQuantity: 4,
    });
    expect(moq.status).toBe(200);
    expect(backends.bulkRequests.at(-1)).toMatchObject({ mode: 'moq_set', value: 4 });
    const theirs = await send(
      'POST',
      '/api/products/bulk-update-moq',
      { productIds: [productId], minOrderQuantity: 4 },
      other.apiKey,
    );
    expect(theirs.body).toMatchObject({
      updated: [],
      failures: [{ product_id: productId, reason: 'not_owned' }],
    });
  });

  it('bulk updates refuse 0 or more than 200 ids, bad ids and unknown modes', async () => {
    const tooMany = Array.from({ length: 201 }, (_, i) => i + 1);
    expectProblem(
      await send('POST', '/api/products/bulk-update-price', {
        productIds: tooMany,
        mode: 'price_set',
        value: 1,
      }),
      400,
      ['productIds'],
    );
    expectProblem(
      await send('POST', '/api/products/bulk-update-price', { productIds: [], mode: 'price_set', value: 1 }),
      400,
      ['productIds'],
    );
    expectProblem(
      await send('POST', '/api/products/bulk-update-price', {
        productIds: ['p1', 0],
        mode: 'moq_set',
        value: 1,
      }),
      400,
      ['productIds/0', 'productIds/1', 'mode'],
    );
    expectProblem(
      await send('POST', '/api/products/bulk-update-moq', { productIds: [1], minOrderQuantity: 1.5 }),
      400,
      ['minOrderQuantity'],
    );
  });

  describe('Idempotency-Key', () => {
    const publish = (key: string, body: unknown = listing, path = '/api/products') =>
      gateway.call(path, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'X-MCP-API-Key': seller.apiKey,
          'Idempotency-Key': key,
        },
        body: JSON.stringify(body),
      });

    it('passes the key to the listing service and echoes it on the 201', async () => {
      const answer = await publish('0f8e2f4c-2b7a-4d2e-9b1c-3f5d6a7b8c9d');
      expect(answer.status).toBe(201);
      expect(answer.headers.get('idempotency-key')).toBe('0f8e2f4c-2b7a-4d2e-9b1c-3f5d6a7b8c9d');
      expect(backends.createRequests.at(-1)).toMatchObject({
        idempotencyKey: '0f8e2f4c-2b7a-4d2e-9b1c-3f5d6a7b8c9d',
      });
    });

    it("answers the service's idempotency conflict as a 422 problem with the code idempotency_conflict", async () => {
      const answer = await publish(CONFLICTING_IDEMPOTENCY_KEY);
      expect(answer.status).toBe(422);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({
        type: expect.stringMatching(/\/problems\/idempotency-conflict$/),
        status: 422,
        code: 'idempotency_conflict',
      });
      expect(answer.headers.get('idempotency-key')).toBe(CONFLICTING_IDEMPOTENCY_KEY);
    });

    it('refuses an empty, overlong or non-ASCII key with a 400 naming the header, calling no service', async () => {
      const calls = backends.createRequests.length;
      for (const key of ['', 'k'.repeat(256), 'clé']) {
        expectProblem(await publish(key), 400, ['Idempotency-Key']);
      }
      expect(backends.createRequests.length).toBe(calls);
    });

    it('takes the header as the idempotency_key of create_listing on /api/mcp/invoke, and checks they agree', async () => {
      const parameters = {
        name: 'Invoked lot',
        category: 'electronics',
        condition: 'shelf_pulls',
        quantity: 2,
        price_per_unit: 500,
      };
      const invoked = await publish(
        'invoke-key-1',
        { tool: 'create_listing', parameters },
        '/api/mcp/invoke',
      );
      expect(invoked.status).toBe(200);
      expect(invoked.headers.get('idempotency-key')).toBe('invoke-key-1');
      expect(backends.createRequests.at(-1)).toMatchObject({ idempotencyKey: 'invoke-key-1' });
      const differing = await publish(
        'invoke-key-2',
        { tool: 'create_listing', parameters: { ...parameters, idempotency_key: 'invoke-key-3' } },
        '/api/mcp/invoke',
      );
      expectProblem(differing, 400, ['Idempotency-Key']);
    });

    it('lets tools that create nothing ignore the header, even a malformed one', async () => {
      const answer = await publish('', { tool: 'search_inventory', parameters: {} }, '/api/mcp/invoke');
      expect(answer.status).toBe(200);
      expect(answer.headers.get('idempotency-key')).toBeNull();
    });
  });
});
