import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';
import { eventually } from '../src/harness/processes.js';

/**
 * Prompts, completions and logging over /mcp with the official SDK client (docs/agents.md, "MCP"): the journeys,
 * the vocabulary and the caller's own quote ids as completions, and the stateless logging level.
 */
describe('MCP prompts, completions and logging (embedded mode)', () => {
  let marketplace: E2eMarketplace;
  const clients: Client[] = [];
  let anonymous: Client;
  let asBuyer: Client;
  let asSeller: Client;
  let asOtherBuyer: Client;
  let quoteId: string;
  let productId: string;

  const connect = async (apiKey?: string): Promise<Client> => {
    const client = new Client({ name: 'prompts-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl), {
        requestInit: { headers: apiKey ? { 'x-mcp-api-key': apiKey } : {} },
      }),
    );
    clients.push(client);
    return client;
  };
  const quoteIdsOf = async (client: Client, value: string) =>
    (
      await client.complete({
        ref: { type: 'ref/prompt', name: 'answer_quote_inbox' },
        argument: { name: 'quote_request_id', value },
      })
    ).completion;

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
    const [seller, buyer, otherBuyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Prompt Seller'),
      marketplace.client.createAccount('buyer', 'Prompt Buyer'),
      marketplace.client.createAccount('buyer', 'Prompt Other Buyer'),
    ]);
    const published = await marketplace.client.publish(seller.apiKey, {
      name: 'Drelvane pallet of desk lamps',
      description: 'Overstock lot, boxed',
      imageUrl: marketplace.images.imageUrl('drelvane'),
      price: 9.5,
      quantity: 300,
      condition: 'overstock',
      category: 'home_goods',
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    productId = published.body.id;
    await eventually(
      async () =>
        (await marketplace.client.search({ q: 'drelvane' })).pagination.total === 1 ? true : undefined,
      { timeoutMs: 15_000, describe: () => `listing not searchable:\n${marketplace.logs()}` },
    );
    [anonymous, asBuyer, asSeller, asOtherBuyer] = await Promise.all([
      connect(),
      connect(buyer.apiKey),
      connect(seller.apiKey),
      connect(otherBuyer.apiKey),
    ]);
    const quoted = (await asBuyer.callTool({
      name: 'request_quote',
      arguments: { product_id: published.body.id, quantity: 2_000, buyer_email: 'buyer@example.com' },
    })) as CallToolResult;
    expect(quoted.isError ?? false).toBe(false);
    quoteId = String((quoted.structuredContent as { quote_request_id: number }).quote_request_id);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await marketplace?.stop();
  }, 60_000);

  it('declares prompts, completions and logging', () => {
    expect(anonymous.getServerCapabilities()).toMatchObject({ prompts: {}, completions: {}, logging: {} });
  });

  it('lists the journeys and gets one whose text names the tools in order', async () => {
    const { prompts } = await anonymous.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual([
      'find_and_quote_lot',
      'restock_from_liquidation',
      'answer_quote_inbox',
    ]);
    const restock = prompts.find((prompt) => prompt.name === 'restock_from_liquidation')!;
    expect(restock.arguments?.filter((arg) => arg.required).map((arg) => arg.name)).toEqual([
      'product',
      'quantity',
    ]);
    const got = await anonymous.getPrompt({
      name: 'restock_from_liquidation',
      arguments: { product: 'desk lamps', quantity: '200', max_unit_price: '900' },
    });
    const text = (got.messages[0]!.content as { text: string }).text;
    expect(text).toContain('Restock 200 units of desk lamps at no more than 900 cents a unit');
    const tools = (await anonymous.listTools()).tools.map((tool) => tool.name);
    const named = [
      'search_inventory_semantic',
      'get_product_details',
      'quick_buy',
      'request_quote',
      'subscribe_to_query',
    ];
    for (const tool of named) expect(tools).toContain(tool);
    const positions = named.map((tool) => text.indexOf(tool));
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    await expect(
      anonymous.getPrompt({ name: 'restock_from_liquidation', arguments: { product: 'x' } }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('arguments.quantity is required'),
    });
  });

  it("completes categories by prefix and the caller's own quote ids", async () => {
    const categories = await anonymous.complete({
      ref: { type: 'ref/prompt', name: 'restock_from_liquidation' },
      argument: { name: 'category', value: 'ho' },
    });
    expect(categories.completion).toEqual({ values: ['home_goods'], total: 1, hasMore: false });

    expect((await quoteIdsOf(asBuyer, quoteId)).values).toEqual([quoteId]);
    expect((await quoteIdsOf(asBuyer, '')).values).toContain(quoteId);
    expect((await quoteIdsOf(asSeller, quoteId.slice(0, 1))).values).toContain(quoteId);
    expect((await quoteIdsOf(asOtherBuyer, '')).values).not.toContain(quoteId);
    expect((await quoteIdsOf(anonymous, '')).values).toEqual([]);
  });

  it('acknowledges logging/setLevel and refuses an unknown level with -32602', async () => {
    await expect(asBuyer.setLoggingLevel('error')).resolves.toEqual({});
    await expect(asBuyer.setLoggingLevel('verbose' as LoggingLevel)).rejects.toMatchObject({ code: -32602 });
  });

  it('names the seller in the feed as the markdown page does, and links terms and returns that answer', async () => {
    const feedItem = async () => {
      const response = await fetch(new URL('/acp/feed.json?limit=200', marketplace.client.baseUrl));
      const { items } = (await response.json()) as { items: Record<string, unknown>[] };
      return items.find((item) => item['id'] === productId);
    };
    // The seller's profile reaches the catalog from the account events, after the listing may have.
    const item = await eventually(
      async () => {
        const found = await feedItem();
        return found?.['seller_name'] === 'Prompt Seller' ? found : undefined;
      },
      { timeoutMs: 15_000, describe: () => `feed never named the seller:\n${marketplace.logs()}` },
    );
    const page = await fetch(new URL(`/agents/products/${productId}.md`, marketplace.client.baseUrl));
    expect(await page.text()).toContain('**Seller:** Prompt Seller');
    for (const field of ['seller_tos', 'return_policy']) {
      const url = new URL(item[field] as string);
      const answer = await fetch(new URL(url.pathname, marketplace.client.baseUrl));
      expect({ field, status: answer.status }).toEqual({ field, status: 200 });
    }
    expect(item['return_window']).toBe(2);
  });
});
