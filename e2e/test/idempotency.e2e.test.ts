import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import { OwnDatabase } from '../src/harness/own-database.js';
import { eventually } from '../src/harness/processes.js';
import { expectIdempotencyConflict } from './support/idempotency-conflict.js';

interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Headers;
}

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

/**
 * Idempotency keys through the gateway of `pnpm start` on a PostgreSQL database of its own, so concurrent requests
 * meet on real row locks and the created rows can be counted where the services wrote them (docs/idempotency.md):
 * REST publish, quote and checkout replays, the 422 idempotency conflict, quick_buy on /api/mcp/invoke (also
 * racing), and create_listing through the MCP SDK client.
 */
describe('idempotency keys (embedded mode on PostgreSQL)', () => {
  let ownDatabase: OwnDatabase | undefined;
  let marketplace: EmbeddedMarketplace;
  let database: pg.Client;
  let seller: Account;
  let buyer: Account;
  let quotableId: string;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
    marketplace.client.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const keyed = (key: string, apiKey?: string): Record<string, string> => ({
    'idempotency-key': key,
    ...(apiKey ? { 'x-mcp-api-key': apiKey } : {}),
  });
  /** Rows of `schema.events` of one type whose data matches a JSON containment, counted on the server. */
  const eventsLike = async (schema: string, type: string, data: unknown): Promise<number> => {
    const { rows } = await database.query<{ count: number }>(
      `select count(*)::int as count from "${schema}".events where type = $1 and data @> $2::jsonb`,
      [type, JSON.stringify(data)],
    );
    return rows[0]?.count ?? 0;
  };
  const lot = (name: string) => ({
    name,
    description: 'Overstock lot, boxed',
    imageUrl: marketplace.images.imageUrl('idempotency'),
    price: 20,
    quantity: 40,
    promotePublicly: true,
    instantCheckout: true,
  });

  beforeAll(async () => {
    ownDatabase = await OwnDatabase.create(`e2e_idempotency_${randomBytes(4).toString('hex')}`);
    marketplace = await EmbeddedMarketplace.start({ env: { DATABASE_URL: ownDatabase.url } });
    database = new pg.Client({ connectionString: ownDatabase.url });
    await database.connect();
    [seller, buyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Idempotent Seller'),
      marketplace.client.createAccount('buyer', 'Idempotent Buyer'),
    ]);
    const published = await marketplace.client.publish(seller.apiKey, lot('Quotable Quellmoor lot'));
    expect(published.status).toBe(201);
    quotableId = published.body.id;
    // The quote service learns listings from their events: a verified warm-up request waits for that.
    await eventually(
      async () => {
        const answer = await post(
          '/api/ucp/quotes',
          { product_id: quotableId, quantity: 1, buyer: { email: 'warmup@buyer.example' } },
          { 'x-mcp-api-key': buyer.apiKey },
        );
        return answer.status === 201 ? answer : undefined;
      },
      { timeoutMs: 20_000, describe: () => marketplace.process.logs },
    );
  }, 240_000);

  afterAll(async () => {
    await database?.end();
    await marketplace?.stop();
    await ownDatabase?.drop();
  }, 60_000);

  it('publishes once per Idempotency-Key: a retry answers 201 with the same listing and the key echoed', async () => {
    const key = randomUUID();
    const body = lot('Keyed Brindlecove drills');
    const first = await post('/api/products', body, keyed(key, seller.apiKey));
    const retry = await post('/api/products', body, keyed(key, seller.apiKey));
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(first.headers.get('idempotency-key')).toBe(key);
    expect(retry.headers.get('idempotency-key')).toBe(key);
    expect((retry.body as { id: string }).id).toBe((first.body as { id: string }).id);
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(await eventsLike('listing', 'ListingCreated', { listing: { name: body.name } })).toBe(1);
  });

  it('answers the same key with another body 422 idempotency_conflict, creating nothing', async () => {
    const key = randomUUID();
    expect((await post('/api/products', lot('Keyed conflict lot'), keyed(key, seller.apiKey))).status).toBe(
      201,
    );
    const conflicting = await post(
      '/api/products',
      { ...lot('Keyed conflict lot'), price: 21 },
      keyed(key, seller.apiKey),
    );
    expectIdempotencyConflict(conflicting, key);
    expect(await eventsLike('listing', 'ListingCreated', { listing: { name: 'Keyed conflict lot' } })).toBe(
      1,
    );
  });

  it('refuses a malformed key with a 400 naming the header, and a refused body records nothing', async () => {
    const malformed = await post(
      '/api/products',
      lot('Badly keyed lot'),
      keyed('x'.repeat(256), seller.apiKey),
    );
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ errors: [{ path: 'Idempotency-Key' }] });
    const key = randomUUID();
    const refused = await post(
      '/api/products',
      { ...lot('Corrected lot'), price: -1 },
      keyed(key, seller.apiKey),
    );
    expect(refused.status).toBe(400);
    const corrected = await post('/api/products', lot('Corrected lot'), keyed(key, seller.apiKey));
    expect(corrected.status).toBe(201);
    expect(await eventsLike('listing', 'ListingCreated', { listing: { name: 'Badly keyed lot' } })).toBe(0);
    expect(await eventsLike('listing', 'ListingCreated', { listing: { name: 'Corrected lot' } })).toBe(1);
  });

  it('files an anonymous quote request once per key and buyer email', async () => {
    const key = randomUUID();
    const request = (email: string, message = 'Delivery by Friday?') => ({
      product_id: quotableId,
      quantity: 777,
      buyer: { email },
      message,
    });
    const first = await post('/api/ucp/quotes', request('ada@buyer.example'), keyed(key));
    const retry = await post('/api/ucp/quotes', request('ada@buyer.example'), keyed(key));
    expect([first.status, retry.status]).toEqual([201, 201]);
    const idOf = (answer: Answer) => (answer.body as { quote_request_id: number }).quote_request_id;
    expect(idOf(retry)).toBe(idOf(first));
    expect(retry.headers.get('idempotency-key')).toBe(key);
    // Another mailbox never meets Ada's keys; Ada with another message does.
    const otherBuyer = await post('/api/ucp/quotes', request('bob@buyer.example'), keyed(key));
    expect(otherBuyer.status).toBe(201);
    expect(idOf(otherBuyer)).not.toBe(idOf(first));
    const changed = await post('/api/ucp/quotes', request('ada@buyer.example', 'Sooner?'), keyed(key));
    expect(changed).toMatchObject({ status: 422, body: { code: 'idempotency_conflict' } });
    expect(await eventsLike('quote', 'QuoteRequested', { quoteRequest: { quantity: 777 } })).toBe(2);
  });

  it('creates one checkout session per key, answered 201 as it is now', async () => {
    const key = randomUUID();
    const body = {
      line_items: [{ product_id: quotableId, quantity: 2 }],
      buyer: { email: 'buyer@example.com' },
    };
    const first = await post('/api/ucp/checkout', body, keyed(key, buyer.apiKey));
    const retry = await post('/api/ucp/checkout', body, keyed(key, buyer.apiKey));
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotency-key')).toBe(key);
    const id = (first.body as { id: string }).id;
    const { rows } = await database.query<{ count: number }>(
      `select count(*)::int as count from "order".events where type = 'CheckoutCreated' and stream_id = $1`,
      [id],
    );
    expect(rows[0]?.count).toBe(1);
  });

  it('places one order for quick_buy on /api/mcp/invoke, retried and racing with one key', async () => {
    const product = (await marketplace.client.publish(seller.apiKey, lot('Instant Quellmoor headsets'))).body
      .id;
    const quickBuy = (key: string) =>
      post(
        '/api/mcp/invoke',
        {
          tool: 'quick_buy',
          parameters: { product_id: product, quantity: 3, buyer_email: 'buyer@example.com' },
        },
        keyed(key, buyer.apiKey),
      );
    const orderIdOf = (answer: Answer) => {
      expect(answer.status).toBe(200);
      return (answer.body as { order: { order_id: number } }).order.order_id;
    };
    // The order service reads the listing from the listing service: no projection to wait for.
    const key = randomUUID();
    const first = orderIdOf(await quickBuy(key));
    const retry = await quickBuy(key);
    expect(orderIdOf(retry)).toBe(first);
    expect(retry.headers.get('idempotency-key')).toBe(key);
    const racing = await Promise.all(Array.from({ length: 5 }, () => quickBuy('racing-quick-buy-key')));
    expect(new Set(racing.map(orderIdOf)).size).toBe(1);
    expect(await eventsLike('order', 'OrderPlaced', { order: { productId: product } })).toBe(2);
    // Each order reserved its units once: the catalog learns the stock from the listing events.
    await eventually(
      async () => {
        const { body } = await marketplace.client.request(`/api/ucp/catalog/products/${product}`);
        return (body as { quantity_available?: number }).quantity_available === 40 - 2 * 3 ? body : undefined;
      },
      { timeoutMs: 15_000, describe: () => 'the catalog never showed 34 units left' },
    );
  });

  it('creates one listing per idempotency_key through the MCP SDK client, and reports a conflict', async () => {
    const client = new Client({ name: 'idempotency-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl), {
        requestInit: { headers: { 'x-mcp-api-key': seller.apiKey } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      const createListing = tools.find((tool) => tool.name === 'create_listing');
      expect(createListing?.inputSchema.properties).toHaveProperty('idempotency_key');
      const args = {
        name: 'MCP keyed lot',
        category: 'electronics',
        condition: 'shelf_pulls',
        quantity: 5,
        price_per_unit: 1_500,
        idempotency_key: randomUUID(),
      };
      const call = async (callArgs: Record<string, unknown>) =>
        (await client.callTool({ name: 'create_listing', arguments: callArgs })) as CallToolResult;
      const first = await call(args);
      const retry = await call(args);
      expect(first.isError).toBeFalsy();
      expect(retry.structuredContent).toEqual(first.structuredContent);
      const conflict = await call({ ...args, quantity: 6 });
      expect(conflict.isError).toBe(true);
      expect(conflict.content).toEqual([
        expect.objectContaining({ type: 'text', text: expect.stringContaining('idempotency_conflict') }),
      ]);
      expect(await eventsLike('listing', 'ListingCreated', { listing: { name: 'MCP keyed lot' } })).toBe(1);
    } finally {
      await client.close();
    }
  });
});
