import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

/**
 * A change of images is checked before anything is fetched (docs/security.md, API7): a seller cannot make the
 * marketplace fetch a URL through another seller's listing, a missing one or a stale If-Match, over REST or MCP.
 * The file's own image server counts what the marketplace asked of it.
 */
describe('image fetches of a listing change (embedded mode)', () => {
  let marketplace: E2eMarketplace;
  let seller: Account;
  let otherSeller: Account;
  let productId: string;
  const clients: Client[] = [];

  const connect = async (account: Account): Promise<Client> => {
    const client = new Client({ name: 'image-fetches', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl), {
        requestInit: { headers: { 'x-mcp-api-key': account.apiKey } },
      }),
    );
    clients.push(client);
    return client;
  };
  const put = (id: string, body: unknown, apiKey: string, ifMatch?: string) =>
    marketplace.client.request(`/api/products/${id}`, {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        'x-mcp-api-key': apiKey,
        ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }),
      },
      body: JSON.stringify(body),
    });
  /** A tool call that must fail: its text. */
  const failure = async (client: Client, args: Record<string, unknown>): Promise<string> => {
    const result = (await client.callTool({ name: 'update_listing', arguments: args })) as CallToolResult;
    expect(result.isError).toBe(true);
    return (result.content as { text: string }[]).map((block) => block.text).join('\n');
  };

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
    [seller, otherSeller] = await Promise.all([
      marketplace.client.createAccount('seller', 'Image Fetch Seller'),
      marketplace.client.createAccount('seller', 'Image Fetch Other Seller'),
    ]);
    const published = await marketplace.client.publish(seller.apiKey, {
      name: 'Pallet of desk lamps',
      description: 'Customer returns, tested',
      imageUrl: marketplace.images.imageUrl('lamps'),
      price: 9,
      quantity: 300,
    });
    expect(published.status).toBe(201);
    productId = published.body.id;
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await marketplace?.stop();
  }, 60_000);

  it('PUT fetches nothing for another seller’s listing, a missing one or a stale If-Match', async () => {
    const requestsBefore = marketplace.images.requests();
    const body = {
      imageUrl: marketplace.images.imageUrl('rest-not-fetched'),
      galleryImageUrls: [marketplace.images.imageUrl('rest-gallery-not-fetched')],
    };
    expect((await put(productId, body, otherSeller.apiKey)).status).toBe(404);
    expect((await put('product_9007199254740991', body, seller.apiKey)).status).toBe(404);
    expect((await put(productId, body, seller.apiKey, '"99"')).status).toBe(412);
    expect(marketplace.images.requests()).toBe(requestsBefore);
    // The seller's own listing at its current version: both images are fetched.
    const current = await marketplace.client.request(`/api/products/${productId}`, {
      headers: { 'x-mcp-api-key': seller.apiKey },
    });
    const changed = await put(productId, body, seller.apiKey, current.headers.get('etag') ?? '');
    expect(changed.status).toBe(200);
    expect(marketplace.images.requests()).toBe(requestsBefore + 2);
  });

  it('update_listing fetches nothing for another seller’s listing, a missing one or a stale expected_version', async () => {
    const [asSeller, asOtherSeller] = await Promise.all([connect(seller), connect(otherSeller)]);
    const requestsBefore = marketplace.images.requests();
    const args = {
      image_url: marketplace.images.imageUrl('mcp-not-fetched'),
      gallery_image_urls: [marketplace.images.imageUrl('mcp-gallery-not-fetched')],
    };
    expect(await failure(asOtherSeller, { product_id: productId, ...args })).toMatch(/does not exist/);
    expect(await failure(asSeller, { product_id: 'product_9007199254740991', ...args })).toMatch(
      /does not exist/,
    );
    expect(await failure(asSeller, { product_id: productId, expected_version: 99, ...args })).toMatch(
      /is at version \d+, not 99/,
    );
    expect(marketplace.images.requests()).toBe(requestsBefore);
  });
});
