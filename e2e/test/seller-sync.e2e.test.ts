import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import { OwnDatabase } from '../src/harness/own-database.js';
import { eventually } from '../src/harness/processes.js';

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

interface Page {
  readonly listings: { id: string; sku: string; status: string; version: number; updated_at: string }[];
  readonly total: number;
  readonly next_cursor: string | null;
}

const SEEDED = 2_500;
const BULK_SIZE = 500;

interface BulkAnswer {
  readonly results: {
    index: number;
    status: 'created' | 'updated' | 'unchanged' | 'error';
    product_id?: string;
    version?: number;
    errors?: { field: string; message: string }[];
  }[];
  readonly summary: Record<'created' | 'updated' | 'unchanged' | 'error', number>;
}

/**
 * A seller at ERP scale syncs and reads its listings back through the gateway of `pnpm start` (on PostgreSQL):
 * 2,500 listings published in bulk calls, upserted by sku, paged by cursor over REST with their total,
 * filters, one listing with its ETag, and the MCP twins bulk_upsert_listings and list_my_listings through the
 * SDK client. Another seller sees none of them.
 */
describe('seller sync: bulk upsert and reading listings back (embedded mode on PostgreSQL)', () => {
  let ownDatabase: OwnDatabase | undefined;
  let marketplace: EmbeddedMarketplace;
  let seller: Account;
  let otherSeller: Account;
  let buyer: Account;
  const seeded: string[] = [];

  const get = async (path: string, apiKey: string) =>
    marketplace.client.request(path, { headers: { 'x-mcp-api-key': apiKey } });
  /** POST /api/products/bulk: a whole call may take seconds (1,000 items, their images). */
  const bulk = async (apiKey: string, body: unknown, headers: Record<string, string> = {}) =>
    marketplace.client.request('/api/products/bulk', {
      method: 'POST',
      headers: { 'x-mcp-api-key': apiKey, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });

  /** The MCP SDK client over Streamable HTTP, as the seller. */
  const sellerMcpClient = async (): Promise<Client> => {
    const client = new Client({ name: 'seller-sync-e2e', version: '1.0.0' });
    const url = new URL('/mcp', marketplace.client.baseUrl);
    const headers = { 'x-mcp-api-key': seller.apiKey };
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    return client;
  };

  beforeAll(async () => {
    ownDatabase = await OwnDatabase.create(`e2e_seller_sync_${randomBytes(4).toString('hex')}`);
    marketplace = await EmbeddedMarketplace.start({ env: { DATABASE_URL: ownDatabase.url } });
    [seller, otherSeller, buyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Sync Seller'),
      marketplace.client.createAccount('seller', 'Other Seller'),
      marketplace.client.createAccount('buyer', 'Sync Buyer'),
    ]);
    // One image-bearing listing; the others borrow its image from the library (same category, same words).
    const lot = (n: number) => ({
      name: `Pallet of Quarvelle office chairs lot ${n}`,
      description: 'Ergonomic chairs, boxed',
      sku: `ERP-${String(n).padStart(5, '0')}`,
      category: 'office_supplies',
      price: 12.5,
      quantity: 10 + (n % 7),
      promotePublicly: n % 2 === 0,
      ...(n === 0 ? { imageUrl: marketplace.images.imageUrl('chair') } : {}),
    });
    const first = await marketplace.client.publish(seller.apiKey, lot(0));
    expect(first.status).toBe(201);
    seeded.push(first.body.id);
    // The rest in bulk calls (docs/specification.md, "Bulk upsert"); the list is read-your-writes.
    for (let from = 1; from < SEEDED; from += BULK_SIZE) {
      const items = Array.from({ length: Math.min(BULK_SIZE, SEEDED - from) }, (_, n) => lot(from + n));
      const { status, body } = await bulk(seller.apiKey, { mode: 'create', items });
      if (status !== 200) throw new Error(`bulk from ${from}: ${status} ${JSON.stringify(body)}`);
      const { results } = body as BulkAnswer;
      expect(results.every((result) => result.status === 'created')).toBe(true);
      seeded.push(...results.map((result) => result.product_id ?? ''));
    }
    const { body } = await get('/api/products?limit=1', seller.apiKey);
    expect((body as Page).total).toBe(SEEDED);
  }, 600_000);

  afterAll(async () => {
    await marketplace?.stop();
    await ownDatabase?.drop();
  });

  it('pages through all 2,500 listings by cursor, each exactly once, with the total', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query = `/api/products?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const { status, body } = await get(query, seller.apiKey);
      expect(status).toBe(200);
      const page = body as Page;
      expect(page.total).toBe(SEEDED);
      seen.push(...page.listings.map((listing) => listing.id));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(Math.ceil(SEEDED / 200));
    expect(seen).toHaveLength(SEEDED);
    expect(new Set(seen)).toEqual(new Set(seeded));
    const theirs = await get('/api/products', otherSeller.apiKey);
    expect(theirs.body).toEqual({ listings: [], total: 0, next_cursor: null });
  });

  it('filters by visibility, status, category, sku and updated_since; bad filters are 400s naming them', async () => {
    const publicOnes = (await get('/api/products?visibility=public&limit=1', seller.apiKey)).body as Page;
    expect(publicOnes.total).toBe(SEEDED / 2);
    const bySku = (await get('/api/products?sku=ERP-00042', seller.apiKey)).body as Page;
    expect(bySku.listings.map((listing) => listing.sku)).toEqual(['ERP-00042']);
    expect(((await get('/api/products?category=toys', seller.apiKey)).body as Page).total).toBe(0);
    expect(((await get('/api/products?status=active&limit=1', seller.apiKey)).body as Page).total).toBe(
      SEEDED,
    );
    const future = new Date(Date.now() + 86_400_000).toISOString();
    expect(((await get(`/api/products?updated_since=${future}`, seller.apiKey)).body as Page).total).toBe(0);
    const bad = await get(
      '/api/products?status=gone&limit=500&updated_since=yesterday&cursor=nope',
      seller.apiKey,
    );
    expect(bad.status).toBe(400);
    const paths = (bad.body as { errors: { path: string }[] }).errors.map((error) => error.path).sort();
    expect(paths).toEqual(expect.arrayContaining(['limit', 'status', 'updated_since']));
    const badCursor = await get('/api/products?cursor=nope', seller.apiKey);
    expect(badCursor.status).toBe(400);
    expect((badCursor.body as { errors: { path: string }[] }).errors.map((error) => error.path)).toEqual([
      'cursor',
    ]);
    expect((await get('/api/products', '')).status).toBe(401);
  });

  it('reads one listing with its version as ETag; another seller’s is 404', async () => {
    const id = seeded[0] ?? '';
    const own = await get(`/api/products/${id}`, seller.apiKey);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id, version: 1, status: 'active', sku: 'ERP-00000' });
    expect(own.headers.get('etag')).toBe('"1"');
    const theirs = await get(`/api/products/${id}`, otherSeller.apiKey);
    expect(theirs.status).toBe(404);
    expect((await get('/api/products/product_999999999', seller.apiKey)).status).toBe(404);
    expect((await get('/api/products/not-a-product', seller.apiKey)).status).toBe(404);
  });

  it('PUT takes the POST body: a new price changes, stock is kept; If-Match is honoured (412 when stale)', async () => {
    const body = {
      name: 'Pallet of Quarvelle desk lamps',
      description: 'Brass desk lamps, boxed',
      sku: 'LAMP-1',
      category: 'office_supplies',
      price: 20,
      quantity: 40,
      imageUrl: marketplace.images.imageUrl('lamp'),
      promotePublicly: true,
    };
    const created = await marketplace.client.publish(seller.apiKey, body);
    expect(created.status).toBe(201);
    const path = `/api/products/${created.body.id}`;
    const put = (changes: unknown, headers: Record<string, string> = {}, apiKey = seller.apiKey) =>
      marketplace.client.request(path, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-mcp-api-key': apiKey, ...headers },
        body: JSON.stringify(changes),
      });
    const read = await get(path, seller.apiKey);
    expect(read.headers.get('etag')).toBe('"1"');
    const changed = await put({ ...body, price: 18.5 }, { 'if-match': '"1"' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ price: 1850, quantity_available: 40, version: 2, sku: 'LAMP-1' });
    expect(changed.headers.get('etag')).toBe('"2"');
    const stale = await put({ ...body, price: 1 }, { 'if-match': '"1"' });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await get(path, seller.apiKey)).body).toMatchObject({ price: 1850, version: 2 });
    const weak = await put({ price: 1 }, { 'if-match': 'W/"2"' });
    expect(weak.status).toBe(412);
    // No If-Match: the change applies to whatever version there is (no 428).
    const unconditional = await put({ quantity: 0 });
    expect(unconditional.status).toBe(200);
    expect(unconditional.body).toMatchObject({
      price: 1850,
      quantity_available: 0,
      status: 'sold_out',
      version: 3,
    });
    const stalePatch = await marketplace.client.request(`${path}/quantity`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-mcp-api-key': seller.apiKey, 'if-match': '"2"' },
      body: JSON.stringify({ quantity: 5 }),
    });
    expect(stalePatch.status).toBe(412);
    expect((await put({ price: 1 }, { 'if-match': '"3"' }, otherSeller.apiKey)).status).toBe(404);
    const paths = async (changes: unknown) =>
      ((await put(changes)).body as { errors: { path: string }[] }).errors.map((error) => error.path);
    expect(await paths({ quantity: -1 })).toEqual(['quantity']);
    expect(await paths({ imageUrl: 'ftp://nope' })).toEqual(['imageUrl']);
    expect(await paths({ galleryImageUrls: ['https://example.com/a.png', 'not a url'] })).toEqual([
      'galleryImageUrls/1',
    ]);
  });

  it('DELETE withdraws: off search and checkout, its order kept; relist puts it back', async () => {
    const created = await marketplace.client.publish(seller.apiKey, {
      name: 'Pallet of Zorvandel stand mixers',
      description: 'Stand mixers, shelf pulls',
      category: 'kitchenware',
      price: 40,
      quantity: 30,
      imageUrl: marketplace.images.imageUrl('mixer'),
      promotePublicly: true,
      instantCheckout: true,
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const path = `/api/products/${id}`;
    const invoke = (tool: string, parameters: unknown, apiKey?: string) =>
      marketplace.client.request('/api/mcp/invoke', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-mcp-api-key': apiKey } : {}) },
        body: JSON.stringify({ tool, parameters }),
      });
    const quickBuy = () =>
      invoke(
        'quick_buy',
        { product_id: id, quantity: 2, buyer_email: 'sync.buyer@example.com', shipping_country: 'US' },
        buyer.apiKey,
      );
    const found = async () => (await marketplace.client.searchAll('zorvandel')).map((product) => product.id);
    await eventually(async () => ((await found()).includes(id) ? true : undefined), {
      timeoutMs: 15_000,
      describe: () => 'the new listing never reached the catalog',
    });
    const bought = await quickBuy();
    expect(bought.status).toBe(200);
    const orderId = (bought.body as { order: { order_id: number } }).order.order_id;

    const withdraw = (apiKey = seller.apiKey) =>
      marketplace.client.request(path, { method: 'DELETE', headers: { 'x-mcp-api-key': apiKey } });
    expect((await withdraw(otherSeller.apiKey)).status).toBe(404);
    const withdrawn = await withdraw();
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body).toMatchObject({ id, status: 'withdrawn', quantity_available: 28 });
    const again = await withdraw();
    expect(again.status).toBe(200);
    expect((again.body as { version: number }).version).toBe((withdrawn.body as { version: number }).version);

    await eventually(async () => ((await found()).includes(id) ? undefined : true), {
      timeoutMs: 15_000,
      describe: () => 'the withdrawn listing stayed in search',
    });
    expect((await marketplace.client.request(`/api/ucp/catalog/products/${id}`)).status).toBe(404);
    expect((await quickBuy()).status).not.toBe(200);
    const order = await invoke('get_order_status', { order_id: orderId }, buyer.apiKey);
    expect(order.status).toBe(200);
    expect(order.body).toMatchObject({ order_id: orderId });
    const listed = await eventually(
      async () => {
        const page = (await get('/api/products?status=withdrawn', seller.apiKey)).body as Page;
        return page.total === 1 ? page : undefined;
      },
      { timeoutMs: 10_000, describe: () => 'the list never showed the listing withdrawn' },
    );
    expect(listed.listings.map((listing) => listing.id)).toEqual([id]);

    const relisted = await marketplace.client.request(`${path}/relist`, {
      method: 'POST',
      headers: { 'x-mcp-api-key': seller.apiKey },
    });
    expect(relisted.status).toBe(200);
    expect(relisted.body).toMatchObject({ id, status: 'active' });
    await eventually(async () => ((await found()).includes(id) ? true : undefined), {
      timeoutMs: 15_000,
      describe: () => 'the relisted listing never came back to search',
    });
  });

  it('create_listing over MCP in an empty category: the placeholder image, said so, found by anonymous search', async () => {
    const client = await sellerMcpClient();
    try {
      const result = (await client.callTool({
        name: 'create_listing',
        arguments: {
          name: 'Crate of Ollivant wooden toy trains',
          category: 'toys',
          condition: 'overstock',
          quantity: 60,
          price_per_unit: 1_200,
          promote_publicly: true,
        },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const created = result.structuredContent as {
        id: string;
        images: { url: string }[];
        notices?: string[];
      };
      expect(created.notices).toEqual([expect.stringContaining('toys placeholder')]);
      const image = await fetch(created.images[0]?.url ?? '');
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe('image/png');
      const found = await eventually(
        async () => {
          const products = await marketplace.client.searchAll('ollivant');
          return products.some((product) => product.id === created.id) ? products : undefined;
        },
        { timeoutMs: 15_000, describe: () => 'anonymous search never found the new toys listing' },
      );
      expect(found.map((product) => product.id)).toEqual([created.id]);
      const own = await get(`/api/products/${created.id}`, seller.apiKey);
      expect(own.body).toMatchObject({ image_placeholder: true, promote_publicly: true });
    } finally {
      await client.close();
    }
  });

  it('list_my_listings over MCP pages the same listings', async () => {
    const client = await sellerMcpClient();
    try {
      const first = (await client.callTool({
        name: 'list_my_listings',
        arguments: { limit: 100, visibility: 'private' },
      })) as CallToolResult;
      expect(first.isError).toBeFalsy();
      const page = first.structuredContent as unknown as Page;
      expect(page.total).toBe(SEEDED / 2);
      expect(page.listings).toHaveLength(100);
      const second = (await client.callTool({
        name: 'list_my_listings',
        arguments: { limit: 100, visibility: 'private', cursor: page.next_cursor },
      })) as CallToolResult;
      const ids = [page, second.structuredContent as unknown as Page].flatMap((p) =>
        p.listings.map((l) => l.id),
      );
      expect(new Set(ids).size).toBe(200);
      const refused = (await client.callTool({
        name: 'list_my_listings',
        arguments: { limit: 0 },
      })) as CallToolResult;
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('bulk upsert by sku, twice: created, then unchanged; a new price updates only that item, stock kept', async () => {
    const record = (n: number, price = 30) => ({
      name: `Crate of Brennick cast iron skillets ${n}`,
      description: 'Pre-seasoned, 12 per crate',
      sku: `SKL-${n}`,
      category: 'kitchenware',
      price,
      quantity: 12,
      promotePublicly: true,
    });
    const items = [record(1), record(2), record(3)];
    const first = await bulk(seller.apiKey, { mode: 'upsert_by_sku', items });
    expect(first.status).toBe(200);
    expect((first.body as BulkAnswer).summary).toEqual({ created: 3, updated: 0, unchanged: 0, error: 0 });
    const again = await bulk(seller.apiKey, { mode: 'upsert_by_sku', items });
    const { results, summary } = again.body as BulkAnswer;
    expect(summary).toEqual({ created: 0, updated: 0, unchanged: 3, error: 0 });
    expect(results.map((result) => result.product_id)).toEqual(
      (first.body as BulkAnswer).results.map((result) => result.product_id),
    );
    const [, second] = results;
    await marketplace.client.request(`/api/products/${second?.product_id}/quantity`, {
      method: 'PATCH',
      headers: { 'x-mcp-api-key': seller.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ quantity: 5 }),
    });
    const changed = await bulk(seller.apiKey, {
      mode: 'upsert_by_sku',
      items: [{ sku: 'SKL-2', name: record(2).name, description: record(2).description, price: 27.5 }],
    });
    expect((changed.body as BulkAnswer).results).toEqual([
      { index: 0, status: 'updated', product_id: second?.product_id, version: 3 },
    ]);
    const own = await get(`/api/products/${second?.product_id}`, seller.apiKey);
    expect(own.body).toMatchObject({ price: 2750, quantity_available: 5 });
    const found = await eventually(
      async () => {
        const products = await marketplace.client.searchAll('brennick skillets');
        return products.length === 3 ? products : undefined;
      },
      { timeoutMs: 15_000, describe: () => 'anonymous search never found the three bulk listings' },
    );
    expect(found.map((product) => product.id).sort()).toEqual(
      results.map((result) => result.product_id).sort(),
    );
  });

  it('bulk: a bad item is its own error naming the field, the others are written; the call’s own faults are 4xx', async () => {
    const good = { name: 'Box of Tamsin brass hinges', description: '200 hinges', sku: 'HNG-1', price: 9 };
    const mixed = await bulk(seller.apiKey, {
      mode: 'upsert_by_sku',
      items: [
        good,
        { ...good, sku: 'HNG-2', price: 'nine' },
        { ...good, sku: 'HNG-1' },
        { ...good, sku: 'HNG-3' },
      ],
    });
    expect(mixed.status).toBe(200);
    const { results } = mixed.body as BulkAnswer;
    expect(results.map((result) => result.status)).toEqual(['created', 'error', 'error', 'created']);
    expect(results[1]?.errors?.map((error) => error.field)).toEqual(['price']);
    expect(results[2]?.errors).toEqual([
      { field: 'sku', message: 'appears earlier in this request (item 0): send it once' },
    ]);
    const tooMany = await bulk(seller.apiKey, { mode: 'create', items: Array(1_001).fill(good) });
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body)).toContain('items');
    const badMode = await bulk(seller.apiKey, { mode: 'merge', items: [good] });
    expect(badMode.status).toBe(400);
    expect(JSON.stringify(badMode.body)).toContain('mode');
    expect((await bulk(buyer.apiKey, { mode: 'create', items: [good] })).status).toBe(403);
    const anonymous = await marketplace.client.request('/api/products/bulk', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'create', items: [good] }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('bulk: text PostgreSQL cannot store fails its own item only, on REST and over MCP', async () => {
    const good = { name: 'Crate of Ulmar pewter mugs', description: '60 mugs', price: 4 };
    // A NUL, a lone surrogate (as JSON escapes, which JSON.stringify keeps) and a right-to-left mark (storable).
    const items = [
      { ...good, sku: 'MUG-1' },
      { ...good, sku: 'MUG-2', name: 'Crate of\u0000mugs' },
      { ...good, sku: 'MUG-3', description: 'mugs \ud800' },
      { ...good, sku: 'MUG-4', name: '\u202eCrate of Ulmar pewter mugs' },
    ];
    const expectPerItem = (answer: BulkAnswer) => {
      expect(answer.results.map((result) => result.status)).toEqual(['created', 'error', 'error', 'created']);
      expect(answer.results[1]?.errors).toEqual([
        { field: 'name', message: 'must not contain the NUL character (U+0000)' },
      ]);
      expect(answer.results[2]?.errors).toEqual([
        { field: 'description', message: 'must not contain a lone surrogate (not valid Unicode)' },
      ]);
    };
    const rest = await bulk(seller.apiKey, { mode: 'upsert_by_sku', items });
    expect(rest.status).toBe(200);
    expectPerItem(rest.body as BulkAnswer);
    const client = await sellerMcpClient();
    try {
      const result = (await client.callTool({
        name: 'bulk_upsert_listings',
        arguments: { mode: 'create', items },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expectPerItem(result.structuredContent as unknown as BulkAnswer);
    } finally {
      await client.close();
    }
    // The envelope's own text is still the call's: a NUL in a field name outside items is a 400 naming it.
    const envelope = await bulk(seller.apiKey, { mode: 'create', items: [good], 'note\u0000': 1 });
    expect(envelope.status).toBe(400);
  });

  it('bulk with an Idempotency-Key: a repeat answers the same and writes nothing; another body is 422', async () => {
    const items = [1, 2].map((n) => ({
      name: `Keyed lot of Vantor drills ${n}`,
      description: 'Cordless',
      price: 40,
    }));
    const key = `bulk-${randomBytes(6).toString('hex')}`;
    const first = await bulk(seller.apiKey, { mode: 'create', items }, { 'idempotency-key': key });
    const totalAfter = ((await get('/api/products?limit=1', seller.apiKey)).body as Page).total;
    const replay = await bulk(seller.apiKey, { mode: 'create', items }, { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(((await get('/api/products?limit=1', seller.apiKey)).body as Page).total).toBe(totalAfter);
    const other = await bulk(
      seller.apiKey,
      { mode: 'create', items: items.slice(1) },
      { 'idempotency-key': key },
    );
    expect(other.status).toBe(422);
    // The items refused at the gateway are part of the body too: another bad item, or none, is another body.
    const withBad = {
      mode: 'create',
      items: [...items, { name: 'Vantor', description: 'x', price: 'nine' }],
    };
    const badKey = `bulk-${randomBytes(6).toString('hex')}`;
    const firstWithBad = await bulk(seller.apiKey, withBad, { 'idempotency-key': badKey });
    expect((firstWithBad.body as BulkAnswer).summary).toMatchObject({ created: 2, error: 1 });
    expect((await bulk(seller.apiKey, withBad, { 'idempotency-key': badKey })).body).toEqual(
      firstWithBad.body,
    );
    const otherBad = { ...withBad, items: [...items, { name: 'Vantor', description: 'x', price: 'ten' }] };
    expect((await bulk(seller.apiKey, otherBad, { 'idempotency-key': badKey })).status).toBe(422);
    expect((await bulk(seller.apiKey, { mode: 'create', items }, { 'idempotency-key': badKey })).status).toBe(
      422,
    );
    // A call whose every item is refused writes nothing and records no key: the key is free for a good body.
    const unusedKey = `bulk-${randomBytes(6).toString('hex')}`;
    const allBad = { mode: 'create', items: otherBad.items.slice(items.length) };
    const refusedAll = await bulk(seller.apiKey, allBad, { 'idempotency-key': unusedKey });
    expect((refusedAll.body as BulkAnswer).summary).toMatchObject({ created: 0, error: 1 });
    const good = await bulk(seller.apiKey, { mode: 'create', items }, { 'idempotency-key': unusedKey });
    expect((good.body as BulkAnswer).summary).toMatchObject({ created: 2, error: 0 });
  });

  it('bulk_upsert_listings over MCP answers per item, as REST does', async () => {
    const client = await sellerMcpClient();
    try {
      const result = (await client.callTool({
        name: 'bulk_upsert_listings',
        arguments: {
          mode: 'upsert_by_sku',
          items: [
            { name: 'Bale of Odrin linen napkins', description: '500 napkins', sku: 'NAP-1', price: 55 },
            { name: 'Bale of Odrin linen napkins', description: '500 napkins', sku: 'NAP-2', quantity: -3 },
          ],
        },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const answer = result.structuredContent as unknown as BulkAnswer;
      expect(answer.summary).toEqual({ created: 1, updated: 0, unchanged: 0, error: 1 });
      expect(answer.results[1]?.errors?.map((error) => error.field)).toEqual(['quantity']);
    } finally {
      await client.close();
    }
  });
});
