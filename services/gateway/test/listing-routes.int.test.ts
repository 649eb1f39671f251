import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { listingV1 } from '@marketplace/proto';
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

  it('PUT answers 404 for another seller as for no listing, 403 for a buyer, 401 without a key', async () => {
    expectProblem(await send('PUT', `/api/products/${productId}`, { price: 1 }, other.apiKey), 404);
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
      404,
    );
  });

  it('PUT …/shipping honours If-Match as PUT does: 412 when stale, none needed (no 428)', async () => {
    const path = `/api/products/${productId}/shipping`;
    const withIfMatch = (body: unknown, ifMatch: string) =>
      gateway.call(path, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'X-MCP-API-Key': seller.apiKey, 'If-Match': ifMatch },
        body: JSON.stringify(body),
      });
    const unconditional = await send('PUT', path, { mode: 'flat_per_order', cents: 15_000 });
    expect(unconditional.status).toBe(200);
    const etag = unconditional.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"\d+"$/);
    const stale = `"${Number(etag.slice(1, -1)) - 1}"`;
    const sent = backends.shippingRequests.length;
    expectProblem(await withIfMatch({ mode: 'included' }, stale), 412);
    expect(backends.shippingRequests.at(-1)?.matchVersions).toEqual([Number(stale.slice(1, -1))]);
    expect(backends.shippingRequests.length).toBe(sent + 1);
    const matched = await withIfMatch({ mode: 'per_unit', cents: 40 }, etag);
    expect(matched.status).toBe(200);
    expect(matched.body).toMatchObject({ shipping: { mode: 'per_unit', cents: 40 } });
    expect(matched.headers.get('etag')).toBe(`"${Number(etag.slice(1, -1)) + 1}"`);
  });

  it('POST and PUT take the freight terms of PUT …/shipping, checked by the same schema', async () => {
    const created = await gateway.postJson(
      '/api/products',
      { ...listing, shipping: { mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' } },
      { 'X-MCP-API-Key': seller.apiKey },
    );
    expect(created.status).toBe(201);
    expect(backends.createRequests.at(-1)?.draft?.shipping).toEqual({
      mode: 'buyer_pickup',
      shipFromRegion: 'Reno, NV',
    });
    expect(created.body).toMatchObject({ shipping: { mode: 'buyer_pickup', ship_from_region: 'Reno, NV' } });
    const id = (created.body as { id: string }).id;
    const updated = await send('PUT', `/api/products/${id}`, { shipping: { mode: 'per_unit', cents: 25 } });
    expect(updated.status).toBe(200);
    expect(backends.updateRequests.at(-1)?.changes?.shipping).toEqual({ mode: 'per_unit', cents: 25 });
    const kept = await send('PUT', `/api/products/${id}`, { price: 3, shipping: null });
    expect(kept.status).toBe(200);
    expect(backends.updateRequests.at(-1)?.changes?.shipping).toBeUndefined();
    const bad = { mode: 'teleport', cents: 0, shipFromRegion: 'x'.repeat(301), colour: 'red' };
    const paths = ['shipping/mode', 'shipping/cents', 'shipping/shipFromRegion', 'shipping/colour'];
    expectProblem(await send('PUT', `/api/products/${id}/shipping`, bad), 400, [
      'mode',
      'cents',
      'shipFromRegion',
      'colour',
    ]);
    expectProblem(await send('PUT', `/api/products/${id}`, { shipping: bad }), 400, paths);
    const refusedCreate = await gateway.postJson(
      '/api/products',
      { ...listing, shipping: bad },
      { 'X-MCP-API-Key': seller.apiKey },
    );
    expectProblem(refusedCreate, 400, paths);
  });

  it('create_listing and update_listing take the freight terms of set_listing_shipping', async () => {
    const invoke = (tool: string, parameters: Record<string, unknown>) =>
      send('POST', '/api/mcp/invoke', { tool, parameters });
    const created = await invoke('create_listing', {
      name: 'Pallet of drills',
      category: 'tools',
      condition: 'shelf_pulls',
      quantity: 120,
      price_per_unit: 2450,
      shipping: { mode: 'buyer_pickup', ship_from_region: 'Reno, NV' },
    });
    expect(created.status).toBe(200);
    expect(backends.createRequests.at(-1)?.draft?.shipping).toEqual({
      mode: 'buyer_pickup',
      shipFromRegion: 'Reno, NV',
    });
    const id = (created.body as { id: string }).id;
    const updated = await invoke('update_listing', {
      product_id: id,
      shipping: { mode: 'flat_per_order', cents: 15_000 },
    });
    expect(updated.status).toBe(200);
    expect(backends.updateRequests.at(-1)?.changes?.shipping).toEqual({
      mode: 'flat_per_order',
      cents: 15_000,
    });
    const refused = await invoke('update_listing', {
      product_id: id,
      shipping: { mode: 'per_unit', cents: 0, ship_from_region: 7 },
    });
    expectProblem(refused, 400, ['parameters/shipping/cents', 'parameters/shipping/ship_from_region']);
    const stale = await invoke('set_listing_shipping', {
      product_id: id,
      mode: 'included',
      expected_version: 1,
    });
    expectProblem(stale, 412);
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
      mode: listingV1.BulkUpdateMode.BULK_UPDATE_MODE_PRICE_PERCENT_DECREASE,
      value: 10,
    });
    const moq = await send('POST', '/api/products/bulk-update-moq', {
      productIds: [productId],
      minOrderQuantity: 4,
    });
    expect(moq.status).toBe(200);
    expect(backends.bulkRequests.at(-1)).toMatchObject({
      mode: listingV1.BulkUpdateMode.BULK_UPDATE_MODE_MOQ_SET,
      value: 4,
    });
    const theirs = await send(
      'POST',
      '/api/products/bulk-update-moq',
      { productIds: [productId], minOrderQuantity: 4 },
      other.apiKey,
    );
    expect(theirs.body).toMatchObject({
      updated: [],
      failures: [{ product_id: productId, reason: 'not_found' }],
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
