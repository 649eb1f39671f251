import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import { eventually } from '../src/harness/processes.js';

interface SemanticAnswer {
  readonly products: readonly { id: string; title: string; similarity: number; price: number }[];
}

/**
 * Semantic search through the gateway (docs/specification.md, "Catalog endpoints" semanticSearchProducts, 4.3 search_inventory_semantic), with
 * the default local embedder: listings are embedded by the catalog's projection, found by meaning, filtered,
 * and only when promoted; without an embedding provider the endpoint answers 503.
 */
describe('semantic search (embedded mode, local embedder)', () => {
  let marketplace: EmbeddedMarketplace;
  const ids: Record<string, string> = {};

  const search = (body: unknown) =>
    marketplace.client.request('/api/ucp/catalog/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    marketplace = await EmbeddedMarketplace.start();
    const seller = await marketplace.client.createAccount('seller', 'Semantic Seller');
    const listings = {
      laptops: { name: 'Pallet of 40 Dell Latitude laptops', description: 'Intel Core i5, 8GB RAM, SSD' },
      sofas: { name: 'Lot of 6 leather sofas', description: 'three-seat couches, brown upholstery' },
      hidden: {
        name: 'Box of 10 Lenovo ThinkPad notebooks',
        description: 'Intel Core i7 laptops',
        promotePublicly: false,
      },
    };
    for (const [key, listing] of Object.entries(listings)) {
      const published = await marketplace.client.publish(seller.apiKey, {
        price: 120,
        quantity: 10,
        imageUrl: marketplace.images.imageUrl(key),
        category: key === 'sofas' ? 'home_goods' : 'electronics',
        promotePublicly: true,
        ...listing,
      });
      expect(published.status).toBe(201);
      ids[key] = published.body.id;
    }
  }, 120_000);

  afterAll(async () => {
    await marketplace?.stop();
  });

  it('ranks promoted listings by meaning, with similarities in [0, 1]', async () => {
    const answer = await eventually(
      async () => {
        const found = await search({ query: 'portable computers for a school' });
        const body = found.body as SemanticAnswer;
        return found.status === 200 && body.products.length === 2 ? found : undefined;
      },
      { timeoutMs: 15_000, describe: () => `not both found:\n${marketplace.process.logs}` },
    );

    const { products } = answer.body as SemanticAnswer;
    expect(products.map((product) => product.id)).toEqual([ids.laptops, ids.sofas]);
    expect(products[0]).toMatchObject({ title: 'Pallet of 40 Dell Latitude laptops', price: 12_000 });
    expect(products[0]!.similarity).toBeGreaterThan(products[1]!.similarity);
    for (const { similarity } of products) {
      expect(similarity).toBeGreaterThan(0);
      expect(similarity).toBeLessThanOrEqual(1);
    }
  });

  it('filters the nearest candidates by category and maximum price (cents)', async () => {
    const couches = await search({ query: 'portable computers', category: 'home_goods' });
    expect((couches.body as SemanticAnswer).products.map((product) => product.id)).toEqual([ids.sofas]);
    const cheap = await search({ query: 'portable computers', max_price: 11_999 });
    expect(cheap).toMatchObject({ status: 200, body: { products: [] } });
  });

  it('answers the same through the search_inventory_semantic tool', async () => {
    const answer = await marketplace.client.request('/api/mcp/invoke', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        tool: 'search_inventory_semantic',
        parameters: { query: 'couch for a living room', limit: 1 },
      }),
    });

    expect(answer.status).toBe(200);
    expect(JSON.stringify(answer.body)).toContain(ids.sofas);
    expect(JSON.stringify(answer.body)).not.toContain(ids.laptops);
  });

  it('refuses invalid input with a problem naming the field', async () => {
    const answer = await search({ query: 'laptops', limit: 51 });

    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ errors: [{ path: 'limit' }] });
  });
});

describe('semantic search without an embedding provider', () => {
  let marketplace: EmbeddedMarketplace;

  beforeAll(async () => {
    marketplace = await EmbeddedMarketplace.start({ env: { EMBEDDINGS_PROVIDER: 'none' } });
  }, 120_000);

  afterAll(async () => {
    await marketplace?.stop();
  });

  it('answers 503 as the specification says, while lexical search works', async () => {
    const answer = await marketplace.client.request('/api/ucp/catalog/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'laptops for a school' }),
    });

    expect(answer.status).toBe(503);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await marketplace.client.search({ q: 'laptops' })).products).toEqual([]);
  });
});
