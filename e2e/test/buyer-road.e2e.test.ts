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

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

interface QuoteView {
  readonly quote_request_id: number;
  readonly status: string;
  readonly negotiation_state: string;
  readonly agreed_price: number | null;
  readonly offer_expires_at: string | null;
  readonly history: { party: string; action: string; price: number | null; expires_at: string | null }[];
  readonly how_to_buy?: string;
}

/**
 * The buyer's road from search to a confirmed order (docs/agents.md, "A buyer's road"): the buyer through /mcp
 * with the official MCP SDK client, the seller over REST; a negotiation of three rounds, then purchase,
 * shipment and the buyer's confirmation. Then what the road refuses: the wrong party, out-of-turn answers.
 */
describe("a buyer's road: search, negotiate, buy, receive (embedded mode)", () => {
  let marketplace: E2eMarketplace;
  let seller: Account;
  let buyer: Account;
  let otherBuyer: Account;
  let otherSeller: Account;
  let productId: string;
  let tools: Tool[];
  const clients: Client[] = [];
  const validator = new AjvJsonSchemaValidator();

  const connect = async (account: Account): Promise<Client> => {
    const client = new Client({ name: 'buyer-road', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl), {
        requestInit: { headers: { 'x-mcp-api-key': account.apiKey } },
      }),
    );
    clients.push(client);
    return client;
  };
  let asBuyer: Client;
  let asOtherBuyer: Client;

  /** A tool call that must succeed, its structured content valid against the tool's output schema. */
  const call = async <T = Record<string, unknown>>(
    client: Client,
    name: string,
    args: Record<string, unknown>,
  ): Promise<T> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect({ name, isError: result.isError ?? false, content: result.isError ? result.content : [] }).toEqual(
      {
        name,
        isError: false,
        content: [],
      },
    );
    const tool = tools.find((candidate) => candidate.name === name)!;
    const check = validator.getValidator(tool.outputSchema as Parameters<typeof validator.getValidator>[0])(
      result.structuredContent,
    );
    expect({ name, valid: check.valid, error: check.errorMessage }).toEqual({
      name,
      valid: true,
      error: undefined,
    });
    return result.structuredContent as T;
  };
  const failure = async (client: Client, name: string, args: Record<string, unknown>): Promise<string> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect({ name, isError: result.isError }).toEqual({ name, isError: true });
    return (result.content as { text: string }[]).map((block) => block.text).join('\n');
  };
  const rest = (
    path: string,
    init: { method?: string; body?: unknown; apiKey?: string } = {},
  ): Promise<Answer> =>
    marketplace.client.request(path, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.apiKey ? { 'x-mcp-api-key': init.apiKey } : {}),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
    [seller, otherSeller, buyer, otherBuyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Road Seller'),
      marketplace.client.createAccount('seller', 'Road Other Seller'),
      marketplace.client.createAccount('buyer', 'Road Buyer'),
      marketplace.client.createAccount('buyer', 'Road Other Buyer'),
    ]);
    const published = await marketplace.client.publish(seller.apiKey, {
      name: 'Quillane stainless water bottles',
      description: 'Overstock, boxed in cartons of 25',
      imageUrl: marketplace.images.imageUrl('quillane'),
      price: 12,
      quantity: 800,
      condition: 'overstock',
      promotePublicly: true,
      // Pallets travel on freight: the road's preview and order carry it apart from the goods.
      shipping: { mode: 'flat_per_order', cents: 25_000 },
    });
    expect(published.status).toBe(201);
    productId = published.body.id;
    await eventually(
      async () =>
        (await marketplace.client.search({ q: 'quillane' })).pagination.total >= 1 ? true : undefined,
      { timeoutMs: 15_000, describe: () => `listing not searchable:\n${marketplace.logs()}` },
    );
    [asBuyer, asOtherBuyer] = await Promise.all([connect(buyer), connect(otherBuyer)]);
    tools = (await asBuyer.listTools()).tools;
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await marketplace?.stop();
  }, 60_000);

  it('negotiates three rounds to a price, buys at it, and confirms the shipped order', async () => {
    // Search, then ask for 500 units.
    const found = await call<{ products: { id: string }[] }>(asBuyer, 'search_inventory', {
      query: 'quillane',
    });
    expect(found.products.map((product) => product.id)).toContain(productId);
    const asked = await call<{ quote_request_id: number; status: string }>(asBuyer, 'request_quote', {
      product_id: productId,
      quantity: 500,
      buyer_email: 'road.buyer@example.com',
      target_price: 900,
      message: 'Can you do 9.00 for 500?',
    });
    const id = asked.quote_request_id;
    expect(asked.status).toBe('pending');

    // The seller's REST inbox has it; the seller counters.
    const inbox = await rest('/api/seller/quotes', { apiKey: seller.apiKey });
    expect(inbox.status).toBe(200);
    expect((inbox.body as { quote_requests: QuoteView[] }).quote_requests).toContainEqual(
      expect.objectContaining({ quote_request_id: id, negotiation_state: 'awaiting_seller', history: [] }),
    );
    const countered = await rest(`/api/seller/quotes/${id}/respond`, {
      method: 'POST',
      apiKey: seller.apiKey,
      body: { action: 'counter', counter_price: 1_100, message: '11.00 is our floor for 500' },
    });
    expect(countered).toMatchObject({
      status: 200,
      body: { negotiation_state: 'awaiting_buyer', agreed_price: 1_100 },
    });

    // The buyer sees the counter with its expiry, and counters back.
    const seen = await call<QuoteView>(asBuyer, 'get_quote_status', { quote_request_id: id });
    expect(seen).toMatchObject({
      negotiation_state: 'awaiting_buyer',
      history: [{ party: 'seller', action: 'counter', price: 1_100, expires_at: expect.any(String) }],
    });
    expect(Date.parse(seen.offer_expires_at!) - Date.now()).toBeGreaterThan(6.9 * 24 * 3_600_000);
    expect(seen.how_to_buy).toContain('respond_to_counter_offer');
    const back = await call<QuoteView>(asBuyer, 'respond_to_counter_offer', {
      quote_request_id: id,
      action: 'counter',
      counter_price: 1_000,
      message: '10.00 and we take all 500 this week',
    });
    expect(back).toMatchObject({
      status: 'pending',
      negotiation_state: 'awaiting_seller',
      agreed_price: null,
    });
    // Nothing is buyable while the seller considers it.
    expect(await failure(asBuyer, 'accept_quote_and_pay', { quote_request_id: id })).toMatch(/price/i);

    // The seller sees the buyer's counter in its pending inbox, and accepts it.
    const pending = await rest('/api/seller/quotes?status=pending', { apiKey: seller.apiKey });
    const mine = (pending.body as { quote_requests: QuoteView[] }).quote_requests.find(
      (quote) => quote.quote_request_id === id,
    );
    expect(mine?.history.map(({ party, action, price }) => [party, action, price])).toEqual([
      ['seller', 'counter', 1_100],
      ['buyer', 'counter', 1_000],
    ]);
    const accepted = await rest(`/api/seller/quotes/${id}/respond`, {
      method: 'POST',
      apiKey: seller.apiKey,
      body: { action: 'accept', message: 'Deal' },
    });
    expect(accepted).toMatchObject({
      status: 200,
      body: { negotiation_state: 'agreed', agreed_price: 1_000 },
    });
    const agreed = await call<QuoteView>(asBuyer, 'get_quote_status', { quote_request_id: id });
    expect(agreed).toMatchObject({ negotiation_state: 'agreed', agreed_price: 1_000 });
    expect(agreed.history).toHaveLength(3);

    // Preview the purchase at the agreed price, then confirm exactly that.
    const preview = await call<{
      status: string;
      line_items: { unit_price: number; price_source: string; line_total: number; freight: number }[];
      totals: { goods: number; freight: number; total: number };
      escalations: string[];
      confirmation_token: string | null;
      confirmation_expires_at: string | null;
    }>(asBuyer, 'preview_checkout', {
      line_items: [{ product_id: productId, quantity: 500, quote_request_id: id }],
      shipping_country: 'US',
    });
    expect(preview).toMatchObject({
      status: 'ready_for_complete',
      line_items: [{ unit_price: 1_000, price_source: 'quote', line_total: 500_000, freight: 25_000 }],
      totals: { goods: 500_000, freight: 25_000, total: 525_000 },
      escalations: [],
      confirmation_token: expect.stringMatching(/^pct_/),
    });
    expect(Date.parse(preview.confirmation_expires_at!) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    const bought = await call<{
      orders: { order_id: number; quantity: number; freight: number; total: number; status: string }[];
    }>(asBuyer, 'confirm_purchase', { confirmation_token: preview.confirmation_token });
    expect(bought.orders).toEqual([
      expect.objectContaining({
        quantity: 500,
        freight: 25_000,
        total: 525_000,
        status: 'awaiting_shipment',
      }),
    ]);
    const orderId = bought.orders[0]!.order_id;
    // A token places its order once; the quote's price is used once.
    expect(
      await failure(asBuyer, 'confirm_purchase', { confirmation_token: preview.confirmation_token }),
    ).toMatch(/already used/);
    expect(await failure(asBuyer, 'accept_quote_and_pay', { quote_request_id: id })).toMatch(/used/i);

    // The seller ships with tracking and delivers; the buyer sees it and confirms receipt.
    const shipped = await rest(`/api/seller/orders/${orderId}/mark-shipped`, {
      method: 'POST',
      apiKey: seller.apiKey,
      body: {
        tracking_number: '1ZROAD500',
        carrier_name: 'UPS',
        tracking_url: 'https://ups.example/1ZROAD500',
      },
    });
    expect(shipped.status).toBe(200);
    expect(
      (await rest(`/api/seller/orders/${orderId}/mark-delivered`, { method: 'POST', apiKey: seller.apiKey }))
        .status,
    ).toBe(200);
    const status = await call<{ status: string; tracking: { tracking_number: string } }>(
      asBuyer,
      'get_order_status',
      { order_id: orderId },
    );
    expect(status).toMatchObject({ status: 'delivered', tracking: { tracking_number: '1ZROAD500' } });
    const confirmed = await rest(`/api/orders/${orderId}/confirm`, { method: 'POST', apiKey: buyer.apiKey });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'completed' });
  }, 120_000);

  it('refuses the wrong party, an answer out of turn, a second answer, and an invalid body (naming the field)', async () => {
    const asked = await call<{ quote_request_id: number }>(asBuyer, 'request_quote', {
      product_id: productId,
      quantity: 120,
      buyer_email: 'road.buyer@example.com',
    });
    const id = asked.quote_request_id;
    // The buyer cannot answer before the seller did.
    expect(
      await failure(asBuyer, 'respond_to_counter_offer', { quote_request_id: id, action: 'accept' }),
    ).toMatch(/seller/);
    // Another seller does not see it; the buyer cannot use the seller's inbox.
    expect(
      (
        await rest(`/api/seller/quotes/${id}/respond`, {
          method: 'POST',
          apiKey: otherSeller.apiKey,
          body: { action: 'accept' },
        })
      ).status,
    ).toBe(404);
    expect((await rest('/api/seller/quotes', { apiKey: buyer.apiKey })).status).toBe(403);
    expect((await rest('/api/seller/quotes')).status).toBe(401);
    const invalid = await rest(`/api/seller/quotes/${id}/respond`, {
      method: 'POST',
      apiKey: seller.apiKey,
      body: { action: 'counter' },
    });
    expect(invalid.status).toBe(400);
    expect(JSON.stringify(invalid.body)).toContain('counter_price');
    await rest(`/api/seller/quotes/${id}/respond`, {
      method: 'POST',
      apiKey: seller.apiKey,
      body: { action: 'counter', counter_price: 1_150 },
    });
    // Twice: 409.
    expect(
      (
        await rest(`/api/seller/quotes/${id}/respond`, {
          method: 'POST',
          apiKey: seller.apiKey,
          body: { action: 'decline' },
        })
      ).status,
    ).toBe(409);
    // Another buyer, over MCP and REST: not found.
    expect(
      await failure(asOtherBuyer, 'respond_to_counter_offer', { quote_request_id: id, action: 'accept' }),
    ).toMatch(/not found/);
    expect(
      (
        await rest(`/api/ucp/quotes/${id}/respond`, {
          method: 'POST',
          apiKey: otherBuyer.apiKey,
          body: { action: 'accept' },
        })
      ).status,
    ).toBe(404);
    // The seller cannot answer as the buyer.
    expect(
      (
        await rest(`/api/ucp/quotes/${id}/respond`, {
          method: 'POST',
          apiKey: seller.apiKey,
          body: { action: 'accept' },
        })
      ).status,
    ).toBe(403);
    const badPrice = await rest(`/api/ucp/quotes/${id}/respond`, {
      method: 'POST',
      apiKey: buyer.apiKey,
      body: { action: 'counter', counter_price: -5 },
    });
    expect(badPrice.status).toBe(400);
    expect(JSON.stringify(badPrice.body)).toContain('counter_price');
    // Two racing answers of the buyer: one wins, the other is 409.
    const answers = await Promise.all([
      rest(`/api/ucp/quotes/${id}/respond`, {
        method: 'POST',
        apiKey: buyer.apiKey,
        body: { action: 'decline' },
      }),
      rest(`/api/ucp/quotes/${id}/respond`, {
        method: 'POST',
        apiKey: buyer.apiKey,
        body: { action: 'counter', counter_price: 1_000 },
      }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
  }, 120_000);

  it('confirms only the previewed content, for the previewing account, once', async () => {
    const listed = await marketplace.client.publish(seller.apiKey, {
      name: 'Quillane steel lunch boxes',
      description: 'Shelf pulls',
      imageUrl: marketplace.images.imageUrl('quillane-box'),
      price: 8,
      quantity: 60,
      instantCheckout: true,
      promotePublicly: true,
    });
    const boxId = listed.body.id;
    const preview = async (client: Client, quantity: number) =>
      call<{ status: string; confirmation_token: string | null; escalations: string[] }>(
        client,
        'preview_checkout',
        {
          line_items: [{ product_id: boxId, quantity }],
        },
      );
    const mine = await preview(asBuyer, 5);
    const token = mine.confirmation_token!;

    // Another account's token, a forged one, an altered one.
    expect(await failure(asOtherBuyer, 'confirm_purchase', { confirmation_token: token })).toMatch(
      /another account/,
    );
    const confirmOver = (body: unknown, apiKey = buyer.apiKey) =>
      rest('/api/ucp/checkout/confirm', { method: 'POST', apiKey, body });
    expect((await confirmOver({ confirmation_token: token }, otherBuyer.apiKey)).status).toBe(403);
    const forged = await confirmOver({ confirmation_token: 'pct_eyJqdGkiOiJ4In0.AAAA' });
    expect(forged.status).toBe(400);
    expect(JSON.stringify(forged.body)).toContain('confirmation_token');
    const [payload, signature] = token.slice(4).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as {
      previewed: { lines: { unit_price: number }[] };
    };
    claims.previewed.lines[0]!.unit_price = 1;
    const altered = `pct_${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    expect((await confirmOver({ confirmation_token: altered })).status).toBe(400);
    expect((await confirmOver({})).status).toBe(400);

    // The seller changes the price after the preview: 409 naming it, nothing bought.
    const repriced = await rest(`/api/products/${boxId}`, {
      method: 'PUT',
      apiKey: seller.apiKey,
      body: { price: 9 },
    });
    expect(repriced.status).toBe(200);
    // Checkout prices from the order service's view of the listing: wait until a preview shows the new price.
    await eventually(
      async () => {
        const seen = await call<{ line_items: { unit_price: number }[] }>(asBuyer, 'preview_checkout', {
          line_items: [{ product_id: boxId, quantity: 5 }],
        });
        return seen.line_items[0]?.unit_price === 900 ? true : undefined;
      },
      { timeoutMs: 15_000, describe: () => `the new price did not reach checkout:\n${marketplace.logs()}` },
    );
    const changed = await confirmOver({ confirmation_token: token });
    expect(changed.status).toBe(409);
    expect(JSON.stringify(changed.body)).toContain('unit price 800 → 900');

    // A fresh preview at the new price confirms once; two racing confirmations of one token place one order.
    const fresh = (await preview(asBuyer, 5)).confirmation_token!;
    const racing = await Promise.all([
      confirmOver({ confirmation_token: fresh }),
      confirmOver({ confirmation_token: fresh }),
    ]);
    const placed = racing.filter((answer) => answer.status === 201);
    expect(placed.length).toBeGreaterThanOrEqual(1);
    const orderIds = new Set(
      placed.flatMap((answer) =>
        (answer.body as { orders: { order_id: number }[] }).orders.map((o) => o.order_id),
      ),
    );
    expect(orderIds.size).toBe(1);
    expect((await confirmOver({ confirmation_token: fresh })).status).toBe(409);

    // Over the stock: the preview says why and gives no token.
    const tooMany = await preview(asBuyer, 500);
    expect(tooMany).toMatchObject({ status: 'requires_escalation', confirmation_token: null });
    expect(tooMany.escalations.join(' ')).toMatch(/request_quote/);
  }, 120_000);

  it('documents the new operations and the tool', async () => {
    const openapi = (await rest('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(openapi.paths['/api/ucp/quotes/{id}/respond'] ?? {})).toEqual(['post']);
    expect(Object.keys(openapi.paths['/api/seller/quotes'] ?? {})).toEqual(['get']);
    expect(Object.keys(openapi.paths['/api/seller/quotes/{id}/respond'] ?? {})).toEqual(['post']);
    const manifest = (await rest('/api/mcp/schema.json')).body as { tools: { name: string; auth: string }[] };
    for (const name of ['respond_to_counter_offer', 'preview_checkout', 'confirm_purchase']) {
      expect(manifest.tools).toContainEqual(expect.objectContaining({ name, auth: 'buyer' }));
    }
    expect(Object.keys(openapi.paths['/api/ucp/checkout/preview'] ?? {})).toEqual(['post']);
    expect(Object.keys(openapi.paths['/api/ucp/checkout/confirm'] ?? {})).toEqual(['post']);
  });
});
