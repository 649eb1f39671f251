import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';
import { eventually } from '../src/harness/processes.js';

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

interface Preview {
  readonly status: string;
  readonly line_items: { line_total: number; freight: number }[];
  readonly totals: { goods: number; freight: number; total: number };
  readonly escalations: string[];
  readonly confirmation_token: string | null;
}

/**
 * Freight (docs/specification.md, "Checkout and orders": freight), through /mcp with the MCP SDK client: the
 * seller sets a flat freight, the buyer's preview shows it apart from the goods, a change of freight between
 * preview and confirm answers 409, and freight quoted on request escalates to request_quote. Terms also come
 * with create_listing and update_listing; a quote keeps the terms its buyer saw, and its checkout is priced by
 * them; the terms' PUT honours If-Match.
 */
describe('freight terms of a lot (embedded mode)', () => {
  let marketplace: E2eMarketplace;
  let seller: Account;
  let otherSeller: Account;
  let buyer: Account;
  let productId: string;
  let tools: Tool[];
  let asSeller: Client;
  let asBuyer: Client;
  const clients: Client[] = [];
  const validator = new AjvJsonSchemaValidator();

  const connect = async (account: Account): Promise<Client> => {
    const client = new Client({ name: 'freight', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl), {
        requestInit: { headers: { 'x-mcp-api-key': account.apiKey } },
      }),
    );
    clients.push(client);
    return client;
  };

  /** A tool call that must succeed, its structured content valid against the tool's output schema. */
  const call = async <T = Record<string, unknown>>(
    client: Client,
    name: string,
    args: Record<string, unknown>,
  ): Promise<T> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect({ name, isError: result.isError ?? false, content: result.isError ? result.content : [] }).toEqual(
      { name, isError: false, content: [] },
    );
    const tool = tools.find((candidate) => candidate.name === name)!;
    const check = validator.getValidator(tool.outputSchema as Parameters<typeof validator.getValidator>[0])(
      result.structuredContent,
    );
    expect({ name, error: check.errorMessage }).toEqual({ name, error: undefined });
    return result.structuredContent as T;
  };
  const failure = async (client: Client, name: string, args: Record<string, unknown>): Promise<string> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect({ name, isError: result.isError }).toEqual({ name, isError: true });
    return (result.content as { text: string }[]).map((block) => block.text).join('\n');
  };
  const putShipping = (id: string, body: unknown, apiKey: string) =>
    marketplace.client.request(`/api/products/${id}/shipping`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-mcp-api-key': apiKey },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
    [seller, otherSeller, buyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Freight Seller'),
      marketplace.client.createAccount('seller', 'Freight Other Seller'),
      marketplace.client.createAccount('buyer', 'Freight Buyer'),
    ]);
    const published = await marketplace.client.publish(seller.apiKey, {
      name: 'Palletised stoneware mugs',
      description: 'Shelf pulls, 40 cartons on one pallet',
      imageUrl: marketplace.images.imageUrl('stoneware'),
      price: 12,
      quantity: 800,
      condition: 'shelf_pulls',
      instantCheckout: true,
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    productId = published.body.id;
    [asSeller, asBuyer] = await Promise.all([connect(seller), connect(buyer)]);
    tools = (await asSeller.listTools()).tools;
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await marketplace?.stop();
  }, 60_000);

  it('shows a flat freight apart from goods, and answers 409 to a confirmation after the freight changed', async () => {
    const set = await call<{ shipping: unknown; version: number }>(asSeller, 'set_listing_shipping', {
      product_id: productId,
      mode: 'flat_per_order',
      cents: 15_000,
    });
    expect(set.shipping).toEqual({ mode: 'flat_per_order', cents: 15_000 });

    const preview = await call<Preview>(asBuyer, 'preview_checkout', {
      line_items: [{ product_id: productId, quantity: 10 }],
      shipping_country: 'US',
    });
    expect(preview).toMatchObject({
      status: 'ready_for_complete',
      line_items: [{ line_total: 12_000, freight: 15_000 }],
      totals: { goods: 12_000, freight: 15_000, total: 27_000 },
      confirmation_token: expect.stringMatching(/^pct_/),
    });

    // The seller changes the freight (over REST) before the buyer confirms.
    const changed = await putShipping(productId, { mode: 'flat_per_order', cents: 20_000 }, seller.apiKey);
    expect(changed.status).toBe(200);
    const refused = await failure(asBuyer, 'confirm_purchase', {
      confirmation_token: preview.confirmation_token,
    });
    expect(refused).toMatch(/changed since the preview.*freight 15000 → 20000 cents/);

    // Previewed again, the new freight is what the buyer confirms and the order carries.
    const again = await call<Preview>(asBuyer, 'preview_checkout', {
      line_items: [{ product_id: productId, quantity: 10 }],
      shipping_country: 'US',
    });
    expect(again.totals).toEqual({ goods: 12_000, freight: 20_000, total: 32_000 });
    const bought = await call<{ orders: { freight: number; total: number }[] }>(asBuyer, 'confirm_purchase', {
      confirmation_token: again.confirmation_token,
    });
    expect(bought.orders).toEqual([expect.objectContaining({ freight: 20_000, total: 32_000 })]);
    // Replayed after another change of freight, the used token still places nothing.
    expect((await putShipping(productId, { mode: 'per_unit', cents: 100 }, seller.apiKey)).status).toBe(200);
    expect(
      await failure(asBuyer, 'confirm_purchase', { confirmation_token: again.confirmation_token }),
    ).toMatch(/already used/);
    expect(
      (await putShipping(productId, { mode: 'flat_per_order', cents: 20_000 }, seller.apiKey)).status,
    ).toBe(200);
  }, 120_000);

  it('shows the freight terms in the product details and the feed', async () => {
    const details = await eventually(
      async () => {
        const product = await call<{ shipping: unknown }>(asBuyer, 'get_product_details', {
          product_id: productId,
        });
        return JSON.stringify(product.shipping).includes('20000') ? product : undefined;
      },
      { timeoutMs: 15_000, describe: () => `catalog without freight:\n${marketplace.logs()}` },
    );
    expect(details.shipping).toEqual({ mode: 'flat_per_order', cents: 20_000 });
    // The earlier test's last two changes (per unit, then flat again) reach the catalog in order, and the details
    // above may show the flat terms from before them: the feed is read until it shows the last ones too.
    const freight = await eventually(
      async () => {
        const feed = (await marketplace.client.request('/acp/feed.json?limit=200', { method: 'GET' }))
          .body as {
          items: { id: string; freight?: { mode?: string } }[];
        };
        const terms = feed.items.find((item) => item.id === productId)?.freight;
        return terms?.mode === 'flat_per_order' ? terms : undefined;
      },
      { timeoutMs: 15_000, describe: () => `feed without the flat freight:\n${marketplace.logs()}` },
    );
    expect(freight).toEqual({
      mode: 'flat_per_order',
      price_per_order: '200.00 USD',
    });
  }, 60_000);

  it('escalates freight quoted on request to request_quote with the destination', async () => {
    await call(asSeller, 'set_listing_shipping', { product_id: productId, mode: 'quoted_on_request' });
    const preview = await call<Preview>(asBuyer, 'preview_checkout', {
      line_items: [{ product_id: productId, quantity: 10 }],
    });
    expect(preview).toMatchObject({ status: 'requires_escalation', confirmation_token: null });
    expect(preview.escalations.join(' ')).toMatch(/freight.*request_quote.*destination/);
    expect(
      await failure(asBuyer, 'quick_buy', {
        product_id: productId,
        quantity: 10,
        buyer_email: 'freight-buyer@example.com',
      }),
    ).toMatch(/freight/);

    // As the escalation says: ask for a price with the destination; the seller sees where the lot goes.
    const asked = await call<{ quote_request_id: number }>(asBuyer, 'request_quote', {
      product_id: productId,
      quantity: 10,
      buyer_email: 'freight-buyer@example.com',
      shipping_destination: 'Dock 4, 2100 W 35th St, Chicago, IL 60609',
    });
    const inbox = await call<{
      quote_requests: { quote_request_id: number; shipping_destination: string | null }[];
    }>(asSeller, 'get_quote_requests', {});
    expect(inbox.quote_requests).toContainEqual(
      expect.objectContaining({
        quote_request_id: asked.quote_request_id,
        shipping_destination: 'Dock 4, 2100 W 35th St, Chicago, IL 60609',
      }),
    );
  }, 60_000);

  it('takes the terms with the listing, and prices a quote by the terms the buyer saw when asking', async () => {
    const created = await call<{ id: string; shipping: unknown }>(asSeller, 'create_listing', {
      name: 'Palletised enamel camp mugs',
      category: 'kitchenware',
      condition: 'overstock',
      quantity: 800,
      price_per_unit: 1_200,
      image_url: marketplace.images.imageUrl('enamel'),
      promote_publicly: true,
      shipping: { mode: 'flat_per_order', cents: 15_000 },
    });
    expect(created.shipping).toEqual({ mode: 'flat_per_order', cents: 15_000 });
    // The quote service learns of the listing from its events: ask once it takes requests.
    const asked = await eventually(
      async () => {
        const result = (await asBuyer.callTool({
          name: 'request_quote',
          arguments: {
            product_id: created.id,
            quantity: 500,
            buyer_email: 'freight-buyer@example.com',
            shipping_destination: 'Columbus, OH, US',
          },
        })) as CallToolResult;
        return result.isError ? undefined : (result.structuredContent as { quote_request_id: number });
      },
      { timeoutMs: 15_000, describe: () => `quote service without the listing:\n${marketplace.logs()}` },
    );
    const id = asked.quote_request_id;
    // The seller raises the freight after the request (update_listing takes the terms too), then counters.
    const raised = await call<{ shipping: unknown }>(asSeller, 'update_listing', {
      product_id: created.id,
      shipping: { mode: 'flat_per_order', cents: 30_000 },
    });
    expect(raised.shipping).toEqual({ mode: 'flat_per_order', cents: 30_000 });
    const countered = await call<{ shipping: unknown }>(asSeller, 'respond_to_quote', {
      quote_request_id: id,
      action: 'counter',
      counter_price: 1_000,
    });
    expect(countered.shipping).toEqual({ mode: 'flat_per_order', cents: 15_000 });
    const status = await call<{ shipping: unknown; agreed_price: number }>(asBuyer, 'get_quote_status', {
      quote_request_id: id,
    });
    expect(status).toMatchObject({
      agreed_price: 1_000,
      shipping: { mode: 'flat_per_order', cents: 15_000 },
    });
    const quoted = await call<Preview>(asBuyer, 'preview_checkout', {
      line_items: [{ product_id: created.id, quantity: 500, quote_request_id: id }],
      shipping_country: 'US',
    });
    expect(quoted).toMatchObject({
      status: 'ready_for_complete',
      totals: { goods: 500_000, freight: 15_000, total: 515_000 },
    });
    // Without the quote, the listing's terms as they stand now.
    const listed = await call<Preview>(asBuyer, 'preview_checkout', {
      line_items: [{ product_id: created.id, quantity: 10 }],
    });
    expect(listed.totals).toEqual({ goods: 12_000, freight: 30_000, total: 42_000 });
  }, 120_000);

  it('names the refused field, and refuses another seller and a buyer', async () => {
    const missing = await putShipping(productId, { mode: 'per_unit' }, seller.apiKey);
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toMatch(/cents/);
    const unknown = await putShipping(productId, { mode: 'by_air' }, seller.apiKey);
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toMatch(/mode/);
    expect((await putShipping(productId, { mode: 'included' }, otherSeller.apiKey)).status).toBe(404);
    expect((await putShipping(productId, { mode: 'included' }, buyer.apiKey)).status).toBe(403);
    expect(
      await failure(asSeller, 'set_listing_shipping', {
        product_id: productId,
        mode: 'buyer_pickup',
      }),
    ).toMatch(/ship_from_region/);
  }, 60_000);

  it('honours If-Match on the terms as PUT does: 412 when stale, nothing changed', async () => {
    const read = await marketplace.client.request(`/api/products/${productId}`, {
      method: 'GET',
      headers: { 'x-mcp-api-key': seller.apiKey },
    });
    const etag = read.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"\d+"$/);
    const put = (body: unknown, ifMatch: string) =>
      marketplace.client.request(`/api/products/${productId}/shipping`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-mcp-api-key': seller.apiKey, 'if-match': ifMatch },
        body: JSON.stringify(body),
      });
    const stale = await put({ mode: 'included' }, `"${Number(etag.slice(1, -1)) - 1}"`);
    expect(stale.status).toBe(412);
    const current = await put({ mode: 'per_unit', cents: 75 }, etag);
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ shipping: { mode: 'per_unit', cents: 75 } });
    expect(current.headers.get('etag')).toBe(`"${Number(etag.slice(1, -1)) + 1}"`);
  }, 60_000);

  it('documents the route and the tool', async () => {
    const openapi = (await marketplace.client.request('/openapi.json', { method: 'GET' })).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(openapi.paths['/api/products/{productId}/shipping'] ?? {})).toEqual(['put']);
    const manifest = (await marketplace.client.request('/api/mcp/schema.json', { method: 'GET' })).body as {
      tools: { name: string; auth: string }[];
    };
    expect(manifest.tools).toContainEqual(
      expect.objectContaining({ name: 'set_listing_shipping', auth: 'seller' }),
    );
  });
});
