import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';
import { eventually } from '../src/harness/processes.js';

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

interface UcpProduct {
  readonly id: string;
  readonly title: string;
  readonly categories: { value: string }[];
  readonly price_range: { min: { amount: number; currency: string } };
  readonly variants: {
    id: string;
    price: { amount: number };
    availability: { available: boolean; status: string };
    inputs?: { id: string; match: string }[];
  }[];
  readonly metadata: { condition: string | null };
}
interface UcpAnswer {
  readonly ucp: { version: string; status?: string; capabilities: Record<string, unknown> };
  readonly products?: UcpProduct[];
  readonly product?: UcpProduct;
  readonly pagination?: { has_next_page: boolean; cursor?: string; total_count?: number };
  readonly messages?: { type: string; code: string; content: string; severity?: string }[];
}

/** A word no other test's listings carry, so searches see only this file's lots. */
const WORD = 'quorvell';

/**
 * UCP's catalog search and lookup through the gateway (docs/protocols.md §2.4; docs/agents.md, "Protocols"):
 * found from the profile, over REST and over /mcp with the SDK client, the same search as our own, pages by
 * cursor, lookup and get_product with unknown and private ids, and bad input. Every answer is validated against
 * e2e/schemas/ucp-catalog.schema.json, the shapes encoded from that section.
 */
describe('UCP catalog (embedded mode)', () => {
  let marketplace: E2eMarketplace;
  let seller: Account;
  let buyer: Account;
  const ids: string[] = [];
  let privateId: string;
  let base: string;
  let client: Client;
  const schemas: Record<'search' | 'lookup' | 'product', ValidateFunction> = {} as never;

  const post = (path: string, body: unknown, apiKey?: string) =>
    marketplace.client.request(path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(apiKey === undefined ? {} : { 'x-mcp-api-key': apiKey }),
      },
      body: JSON.stringify(body),
    });
  const valid = (kind: keyof typeof schemas, body: unknown): UcpAnswer => {
    const validate = schemas[kind];
    const ok = validate(body);
    expect({ kind, valid: ok, errors: validate.errors ?? null }).toEqual({ kind, valid: true, errors: null });
    return body as UcpAnswer;
  };
  const rest = async (kind: keyof typeof schemas, path: string, body: unknown): Promise<UcpAnswer> => {
    const answer = await post(`${base}${path}`, body);
    expect({ path, status: answer.status, body: answer.status === 200 ? 'ok' : answer.body }).toEqual({
      path,
      status: 200,
      body: 'ok',
    });
    return valid(kind, answer.body);
  };
  const tool = async (kind: keyof typeof schemas, name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect({ name, isError: result.isError ?? false }).toEqual({ name, isError: false });
    // The UCP payload is the structured content (docs/protocols.md §2.2), and the same JSON as text.
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
    return valid(kind, result.structuredContent);
  };
  const META = { 'ucp-agent': { profile: 'https://agent.example/profiles/shopping-agent.json' } };

  beforeAll(async () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(
      JSON.parse(
        readFileSync(new URL('../schemas/ucp-catalog.schema.json', import.meta.url), 'utf8'),
      ) as object,
    );
    const schemaId = 'https://marketplace.invalid/e2e/schemas/ucp-catalog.schema.json';
    schemas.search = ajv.getSchema(`${schemaId}#/$defs/search_response`)!;
    schemas.lookup = ajv.getSchema(`${schemaId}#/$defs/lookup_response`)!;
    schemas.product = ajv.getSchema(`${schemaId}#/$defs/get_product_response`)!;
    marketplace = await sharedMarketplace();
    [seller, buyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Ucp Catalog Seller'),
      marketplace.client.createAccount('buyer', 'Ucp Catalog Buyer'),
    ]);
    const publish = async (listing: Record<string, unknown>): Promise<string> => {
      const published = await marketplace.client.publish(seller.apiKey, {
        description: 'Overstock lot, boxed',
        imageUrl: marketplace.images.imageUrl(`ucp${ids.length}`),
        quantity: 300,
        condition: 'overstock',
        promotePublicly: true,
        ...listing,
      });
      expect({ status: published.status, body: published.body }).toMatchObject({ status: 201 });
      return published.body.id;
    };
    // Oldest first; a search without more words lists the newest first.
    ids.push(
      await publish({
        name: `${WORD} headphones`,
        price: 12,
        category: 'electronics',
        originalRetailPrice: 60,
      }),
    );
    ids.push(await publish({ name: `${WORD} desk chairs`, price: 40, category: 'office_supplies' }));
    ids.push(
      await publish({
        name: `${WORD} speakers`,
        price: 30,
        category: 'electronics',
        condition: 'shelf_pulls',
      }),
    );
    privateId = await publish({ name: `${WORD} private lot`, price: 5, promotePublicly: false });
    await eventually(
      async () => ((await marketplace.client.search({ q: WORD })).pagination.total === 3 ? true : undefined),
      { timeoutMs: 15_000, describe: () => `listings not searchable:\n${marketplace.logs()}` },
    );
    const profile = (await marketplace.client.request('/.well-known/ucp')).body as {
      ucp: { services: Record<string, { transport: string; endpoint: string }[]>; capabilities: object };
    };
    expect(profile.ucp.capabilities).toHaveProperty(['dev.ucp.shopping.catalog.search']);
    expect(profile.ucp.capabilities).toHaveProperty(['dev.ucp.shopping.catalog.lookup']);
    // Found as a platform would: the profile's dev.ucp.shopping REST endpoint, plus the binding's paths.
    base = new URL(
      profile.ucp.services['dev.ucp.shopping']!.find((service) => service.transport === 'rest')!.endpoint,
    ).pathname;
    client = new Client({ name: 'ucp-catalog', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl)));
  }, 300_000);

  afterAll(async () => {
    await client?.close();
    await marketplace?.stop();
  }, 60_000);

  it('searches as our own search does, in UCP shapes, and pages by cursor to the end', async () => {
    const own = await marketplace.client.search({ q: WORD });
    const first = await rest('search', '/catalog/search', { query: WORD, pagination: { limit: 2 } });
    expect(first.ucp).toEqual({
      version: '2026-04-08',
      capabilities: { 'dev.ucp.shopping.catalog.search': [{ version: '2026-04-08' }] },
    });
    expect(first.pagination).toMatchObject({ has_next_page: true, total_count: 3 });
    const second = await rest('search', '/catalog/search', {
      query: WORD,
      pagination: { limit: 2, cursor: first.pagination!.cursor },
    });
    expect(second.pagination).toEqual({ has_next_page: false, total_count: 3 });
    // The same listings in the same order as GET /api/ucp/catalog/products: one search, two shapes.
    expect([...first.products!, ...second.products!].map((product) => product.id)).toEqual(
      own.products.map((product) => product.id),
    );
    const headphones = first.products!.concat(second.products!).find((product) => product.id === ids[0])!;
    expect(headphones).toMatchObject({
      categories: [{ value: 'electronics' }],
      price_range: { min: { amount: 1_200, currency: 'USD' } },
      list_price_range: { min: { amount: 6_000 } },
      variants: [
        { id: ids[0], price: { amount: 1_200 }, availability: { available: true, status: 'in_stock' } },
      ],
      metadata: { condition: 'overstock' },
    });
  });

  it('filters by category, price in cents and condition', async () => {
    const electronics = await rest('search', '/catalog/search', {
      query: WORD,
      filters: { categories: ['electronics'] },
    });
    expect(electronics.products!.map((product) => product.id).sort()).toEqual([ids[0], ids[2]].sort());
    const cheap = await rest('search', '/catalog/search', {
      query: WORD,
      filters: { price: { min: 1_000, max: 3_000 } },
    });
    expect(cheap.products!.map((product) => product.id).sort()).toEqual([ids[0], ids[2]].sort());
    const shelfPulls = await rest('search', '/catalog/search', {
      query: WORD,
      filters: { categories: ['electronics'], condition: 'shelf_pulls', price: { max: 3_000 } },
    });
    expect(shelfPulls.products!.map((product) => product.id)).toEqual([ids[2]]);
    expect(shelfPulls.pagination).toEqual({ has_next_page: false, total_count: 1 });
  });

  it('looks up public lots by id, once each, and says which ids it did not find (a private lot is not found)', async () => {
    const answer = await rest('lookup', '/catalog/lookup', {
      ids: [ids[1], 'product_999999999', ids[1], privateId, 'SKU-UNKNOWN', ids[0]],
    });
    expect(answer.products!.map((product) => product.id)).toEqual([ids[1], ids[0]]);
    expect(answer.products![0]!.variants[0]!.inputs).toEqual([{ id: ids[1], match: 'exact' }]);
    expect(answer.messages).toEqual([
      { type: 'info', code: 'not_found', content: 'product_999999999' },
      { type: 'info', code: 'not_found', content: privateId },
      { type: 'info', code: 'not_found', content: 'SKU-UNKNOWN' },
    ]);
  });

  it('answers get_product with the product, or ucp.status error with not_found', async () => {
    const found = await rest('product', '/catalog/product', { id: ids[2], selected: [], preferences: [] });
    expect(found.ucp.status).toBeUndefined();
    expect(found.product).toMatchObject({ id: ids[2], title: `${WORD} speakers` });
    for (const id of [privateId, 'product_999999999', 'not-ours']) {
      const missing = await rest('product', '/catalog/product', { id });
      expect(missing).toMatchObject({
        ucp: { status: 'error' },
        messages: [{ type: 'error', code: 'not_found', severity: 'unrecoverable' }],
      });
      expect(missing).not.toHaveProperty('product');
    }
  });

  it('serves the same answers over MCP (search_catalog, lookup_catalog, get_product) to the SDK client', async () => {
    const viaRest = await rest('search', '/catalog/search', {
      query: WORD,
      filters: { categories: ['electronics'] },
    });
    const viaMcp = await tool('search', 'search_catalog', {
      meta: META,
      catalog: { query: WORD, filters: { categories: ['electronics'] } },
    });
    expect(viaMcp).toEqual(viaRest);
    const lookup = await tool('lookup', 'lookup_catalog', {
      meta: META,
      catalog: { ids: [ids[0], privateId] },
    });
    expect(lookup.products!.map((product) => product.id)).toEqual([ids[0]]);
    const product = await tool('product', 'get_product', { meta: META, catalog: { id: ids[0] } });
    expect(product.product!.id).toBe(ids[0]);
    const missing = await tool('product', 'get_product', { catalog: { id: 'product_999999999' } });
    expect(missing.ucp.status).toBe('error');

    // Bad arguments: a tool error naming the argument, never a protocol error.
    const refused = (await client.callTool({
      name: 'lookup_catalog',
      arguments: { catalog: { ids: Array.from({ length: 51 }, (_, i) => `product_${i + 1}`) } },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toMatch(/catalog\/ids.*request_too_large/s);
  });

  it('gives a variant id that UCP checkout takes as item.id', async () => {
    const { products } = await rest('search', '/catalog/search', { query: `${WORD} headphones` });
    const variant = products![0]!.variants[0]!;
    const created = await post(
      `${base}/checkout-sessions`,
      { line_items: [{ item: { id: variant.id }, quantity: 10 }] },
      buyer.apiKey,
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      line_items: [{ item: { id: ids[0], price: variant.price.amount }, quantity: 10 }],
    });
  });

  it('answers bad input on every catalog route with a 400 naming the field', async () => {
    const cases: [string, unknown, string][] = [
      ['/catalog/search', {}, 'query'],
      ['/catalog/search', { query: 7 }, 'query'],
      ['/catalog/search', { query: WORD, pagination: { limit: 101 } }, 'pagination/limit'],
      ['/catalog/search', { query: WORD, pagination: { cursor: 'forged' } }, 'pagination/cursor'],
      ['/catalog/search', { filters: { categories: ['electronics', 'tools'] } }, 'filters/categories'],
      ['/catalog/search', { filters: { categories: ['gadgets'] } }, 'filters/categories/0'],
      ['/catalog/search', { query: WORD, filters: { brand: 'Acme' } }, 'filters/brand'],
      ['/catalog/search', { filters: { price: { min: -1 } } }, 'filters/price/min'],
      ['/catalog/search', [], '(root)'],
      ['/catalog/lookup', {}, 'ids'],
      ['/catalog/lookup', { ids: [] }, 'ids'],
      ['/catalog/lookup', { ids: Array.from({ length: 51 }, (_, i) => `product_${i + 1}`) }, 'ids'],
      ['/catalog/lookup', { ids: [ids[0]], filters: {} }, 'filters'],
      ['/catalog/lookup', { ids: [17] }, 'ids/0'],
      ['/catalog/product', {}, 'id'],
      ['/catalog/product', { id: ids[0], filters: { price: {} } }, 'filters'],
    ];
    for (const [path, body, field] of cases) {
      const answer = await post(`${base}${path}`, body);
      expect({ path, field, status: answer.status }).toEqual({ path, field, status: 400 });
      const paths = ((answer.body as { errors?: { path: string }[] }).errors ?? []).map(
        (error) => error.path,
      );
      expect({ path, field, paths }).toEqual({ path, field, paths: expect.arrayContaining([field]) });
    }
    const tooBig = await post(`${base}/catalog/lookup`, { ids: ['x'.repeat(70_000)] });
    expect(tooBig.status).toBe(413);
    const wrongMethod = await marketplace.client.request(`${base}/catalog/search`);
    expect(wrongMethod.status).toBe(405);
  });
});
