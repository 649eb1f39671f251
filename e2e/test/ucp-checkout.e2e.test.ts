import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

interface UcpCheckout {
  readonly id: string;
  readonly status: string;
  readonly line_items: { item: { id: string; price: number }; quantity: number; totals: UcpTotal[] }[];
  readonly totals: UcpTotal[];
  readonly messages: { type: string; code: string; content: string; severity: string }[];
  readonly links: { type: string; url: string }[];
  readonly continue_url?: string;
  readonly order?: { id: string; permalink_url: string; order_ids: number[] };
  readonly ucp: { version: string; capabilities: Record<string, unknown> };
}
interface UcpTotal {
  readonly type: string;
  readonly amount: number;
}

/**
 * UCP's checkout capability through the gateway (docs/protocols.md §2.3; docs/agents.md,
 * "Protocols"): create to completion with a freight line, an escalation to a quote, other buyers, a replayed
 * complete and bad input. Every checkout answer is validated against e2e/schemas/ucp-checkout.schema.json, the
 * shape encoded from that section.
 */
describe('UCP checkout (embedded mode)', () => {
  let marketplace: E2eMarketplace;
  let seller: Account;
  let buyer: Account;
  let otherBuyer: Account;
  let productId: string;
  let validate: ValidateFunction;
  let validateError: ValidateFunction;
  const clients: Client[] = [];

  const post = (path: string, body: unknown, apiKey?: string) =>
    marketplace.client.request(path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(apiKey === undefined ? {} : { 'x-mcp-api-key': apiKey }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  /** A UCP answer of the expected status, valid against the encoded schema. */
  const ucp = async (
    answer: Promise<{ status: number; body: unknown }>,
    status: number,
  ): Promise<UcpCheckout> => {
    const { status: actual, body } = await answer;
    expect({ status: actual, body: actual === status ? 'ok' : body }).toEqual({ status, body: 'ok' });
    const valid = validate(body);
    expect({ valid, errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
    return body as UcpCheckout;
  };
  const amountOf = (totals: readonly UcpTotal[], type: string) =>
    totals.find((total) => total.type === type)?.amount;

  beforeAll(async () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, allErrors: true });
    addFormats.default(ajv);
    const schema = JSON.parse(
      readFileSync(new URL('../schemas/ucp-checkout.schema.json', import.meta.url), 'utf8'),
    ) as { $id: string };
    ajv.addSchema(schema);
    validate = ajv.getSchema(schema.$id)!;
    validateError = ajv.getSchema(`${schema.$id}#/$defs/error_response`)!;
    marketplace = await sharedMarketplace();
    [seller, buyer, otherBuyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Ucp Seller'),
      marketplace.client.createAccount('buyer', 'Ucp Buyer'),
      marketplace.client.createAccount('buyer', 'Ucp Other Buyer'),
    ]);
    const published = await marketplace.client.publish(seller.apiKey, {
      name: 'Boxed LED desk lamps',
      description: 'Overstock, 60 cartons',
      imageUrl: marketplace.images.imageUrl('lamps'),
      price: 20,
      quantity: 600,
      condition: 'shelf_pulls',
      instantCheckout: true,
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    productId = published.body.id;
    const freight = await marketplace.client.request(`/api/products/${productId}/shipping`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-mcp-api-key': seller.apiKey },
      body: JSON.stringify({ mode: 'flat_per_order', cents: 7_500 }),
    });
    expect(freight.status).toBe(200);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await marketplace?.stop();
  }, 60_000);

  it('creates a session with a freight line and completes it once, replays answering the same orders', async () => {
    // Found as a platform would: the profile's dev.ucp.shopping REST endpoint, plus the binding's path.
    const profile = (await marketplace.client.request('/.well-known/ucp')).body as {
      ucp: { services: Record<string, { transport: string; endpoint: string }[]>; capabilities: object };
    };
    expect(profile.ucp.capabilities).toHaveProperty(['dev.ucp.shopping.checkout']);
    const rest = profile.ucp.services['dev.ucp.shopping']!.find((service) => service.transport === 'rest')!;
    const created = await ucp(
      post(
        `${new URL(rest.endpoint).pathname}/checkout-sessions`,
        {
          line_items: [{ item: { id: productId }, quantity: 5 }],
          buyer: { email: 'ucp-buyer@example.com', first_name: 'Ada', last_name: 'Buyer' },
          context: { address_country: 'US' },
          signals: { ignored: true },
        },
        buyer.apiKey,
      ),
      201,
    );
    expect(created).toMatchObject({
      status: 'ready_for_complete',
      currency: 'USD',
      ucp: { version: '2026-04-08', capabilities: { 'dev.ucp.shopping.checkout': expect.any(Array) } },
      line_items: [{ item: { id: productId, price: 2_000 }, quantity: 5 }],
    });
    expect(created.totals).toEqual([
      { type: 'subtotal', amount: 10_000, display_text: 'Goods' },
      { type: 'fulfillment', amount: 7_500, display_text: 'Freight' },
      { type: 'tax', amount: 0, display_text: 'Tax (invoiced by the seller, not collected here)' },
      { type: 'total', amount: 17_500 },
    ]);
    expect(amountOf(created.line_items[0]!.totals, 'fulfillment')).toBe(7_500);
    expect(created.links.map((link) => link.type)).toEqual(['terms_of_service', 'refund_policy']);
    for (const link of created.links) expect((await marketplace.client.request(link.url)).status).toBe(200);

    const get = (apiKey?: string) =>
      marketplace.client.request(`/api/ucp/shopping/checkout-sessions/${created.id}`, {
        headers: apiKey === undefined ? {} : { 'x-mcp-api-key': apiKey },
      });
    expect(await ucp(get(buyer.apiKey), 200)).toEqual(created);
    // Another buyer cannot read or complete it: 404, as if it did not exist (services/order/README.md,
    // "Sessions"); without a credential, 401.
    expect((await get(otherBuyer.apiKey)).status).toBe(404);
    expect((await get()).status).toBe(401);
    const foreign = await post(
      `/api/ucp/shopping/checkout-sessions/${created.id}/complete`,
      {},
      otherBuyer.apiKey,
    );
    expect(foreign.status).toBe(404);
    // Nor can an anonymous caller: invoice terms need an account.
    expect((await post(`/api/ucp/shopping/checkout-sessions/${created.id}/complete`, {})).status).toBe(401);

    const completed = await ucp(
      post(`/api/ucp/shopping/checkout-sessions/${created.id}/complete`, { payment: {} }, buyer.apiKey),
      200,
    );
    expect(completed).toMatchObject({ id: created.id, status: 'completed' });
    expect(completed.order?.order_ids).toHaveLength(1);
    expect(completed.totals).toEqual(created.totals);
    // The order's permalink answers its buyer.
    const permalink = await marketplace.client.request(new URL(completed.order!.permalink_url).pathname, {
      headers: { 'x-mcp-api-key': buyer.apiKey },
    });
    expect(permalink.status).toBe(200);

    // A replay, and two more at once: the same order, never a second one.
    const replays = await Promise.all(
      [1, 2, 3].map(() =>
        ucp(post(`/api/ucp/shopping/checkout-sessions/${created.id}/complete`, undefined, buyer.apiKey), 200),
      ),
    );
    for (const replay of replays) expect(replay.order).toEqual(completed.order);
    expect(await ucp(get(buyer.apiKey), 200)).toEqual(completed);
    expect((await get(otherBuyer.apiKey)).status).toBe(404);
    const orders = await marketplace.client.request('/api/orders', {
      headers: { 'x-mcp-api-key': buyer.apiKey },
    });
    expect(orders.status).toBe(200);
    const placed = (orders.body as { orders: { order_id: number; product_id: string }[] }).orders.filter(
      (order) => order.product_id === productId,
    );
    expect(placed.map((order) => order.order_id)).toEqual(completed.order?.order_ids);
  }, 120_000);

  it('answers requires_escalation with a continue_url over the bulk threshold, and refuses to complete it', async () => {
    const escalated = await ucp(
      post(
        '/api/ucp/shopping/checkout-sessions',
        { line_items: [{ item: { id: productId }, quantity: 150 }], context: { address_country: 'US' } },
        buyer.apiKey,
      ),
      201,
    );
    expect(escalated.status).toBe('requires_escalation');
    // The human step: the product's page, which says how to request a quote.
    expect(new URL(escalated.continue_url!).pathname).toBe(`/agents/products/${productId}.md`);
    expect(escalated.messages).toEqual([
      expect.objectContaining({ type: 'error', code: 'requires_quote', severity: 'requires_buyer_input' }),
    ]);
    expect(escalated.messages[0]!.content).toMatch(/request_quote/);
    const page = await marketplace.client.request(new URL(escalated.continue_url!).pathname);
    expect(page.status).toBe(200);
    const refused = await post(
      `/api/ucp/shopping/checkout-sessions/${escalated.id}/complete`,
      {},
      buyer.apiKey,
    );
    expect(refused.status).toBe(409);
  }, 60_000);

  it('updates an open session (PUT), priced again, and cancels it once; a completed one is not canceled', async () => {
    const put = (id: string, body: unknown, apiKey: string) =>
      marketplace.client.request(`/api/ucp/shopping/checkout-sessions/${id}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-mcp-api-key': apiKey },
        body: JSON.stringify(body),
      });
    const escalated = await ucp(
      post(
        '/api/ucp/shopping/checkout-sessions',
        { line_items: [{ item: { id: productId }, quantity: 150 }] },
        buyer.apiKey,
      ),
      201,
    );
    expect(escalated.status).toBe('requires_escalation');
    const fewer = {
      line_items: [{ item: { id: productId }, quantity: 20 }],
      context: { address_country: 'US' },
    };
    expect((await put(escalated.id, fewer, otherBuyer.apiKey)).status).toBe(404);
    const updated = await ucp(put(escalated.id, fewer, buyer.apiKey), 200);
    expect(updated).toMatchObject({ id: escalated.id, status: 'ready_for_complete', messages: [] });
    expect(amountOf(updated.totals, 'subtotal')).toBe(40_000);
    expect(updated).not.toHaveProperty('continue_url');

    const cancel = (id: string, apiKey: string) =>
      post(`/api/ucp/shopping/checkout-sessions/${id}/cancel`, undefined, apiKey);
    expect((await cancel(escalated.id, otherBuyer.apiKey)).status).toBe(404);
    const canceled = await ucp(cancel(escalated.id, buyer.apiKey), 200);
    expect(canceled.status).toBe('canceled');
    expect(await ucp(cancel(escalated.id, buyer.apiKey), 200)).toEqual(canceled);
    expect(
      (await post(`/api/ucp/shopping/checkout-sessions/${escalated.id}/complete`, {}, buyer.apiKey)).status,
    ).toBe(409);
    expect((await put(escalated.id, fewer, buyer.apiKey)).status).toBe(409);

    const bought = await ucp(
      post(
        '/api/ucp/shopping/checkout-sessions',
        { line_items: [{ item: { id: productId }, quantity: 1 }] },
        buyer.apiKey,
      ),
      201,
    );
    await ucp(post(`/api/ucp/shopping/checkout-sessions/${bought.id}/complete`, {}, buyer.apiKey), 200);
    expect((await cancel(bought.id, buyer.apiKey)).status).toBe(409);
  }, 60_000);

  it('answers bad input with a 400 naming the field, and a seller with 403', async () => {
    const cases: [unknown, string][] = [
      [{ line_items: [{ item: { id: productId }, quantity: 0 }] }, 'line_items/0/quantity'],
      [{ line_items: [{ item: {}, quantity: 1 }] }, 'line_items/0/item/id'],
      [{ line_items: [] }, 'line_items'],
      [
        { line_items: [{ item: { id: productId }, quantity: 1 }], buyer: { email: 'not-an-email' } },
        'buyer/email',
      ],
      [
        { line_items: [{ item: { id: productId }, quantity: 1 }], context: { address_country: 'USA' } },
        'context/address_country',
      ],
    ];
    for (const [body, field] of cases) {
      const answer = await post('/api/ucp/shopping/checkout-sessions', body, buyer.apiKey);
      expect({ field, status: answer.status }).toEqual({ field, status: 400 });
      expect(JSON.stringify(answer.body)).toContain(field);
    }
    const badId = await post('/api/ucp/shopping/checkout-sessions/order_1/complete', {}, buyer.apiKey);
    expect(badId.status).toBe(400);
    expect(JSON.stringify(badId.body)).toContain('id');
    const badGet = await marketplace.client.request('/api/ucp/shopping/checkout-sessions/order_1', {
      headers: { 'x-mcp-api-key': buyer.apiKey },
    });
    expect(badGet.status).toBe(400);
    const asSeller = await post(
      '/api/ucp/shopping/checkout-sessions',
      { line_items: [{ item: { id: productId }, quantity: 1 }] },
      seller.apiKey,
    );
    expect(asSeller.status).toBe(403);
  }, 60_000);

  describe('over MCP (create_checkout … cancel_checkout, the SDK client)', () => {
    const META = { 'ucp-agent': { profile: 'https://agent.example/profiles/shopping-agent.json' } };
    const keyed = (key: string = randomUUID()) => ({ ...META, 'idempotency-key': key });
    /** Connected to the endpoint of the profile's `mcp` service for dev.ucp.shopping, as a platform finds it. */
    const connect = async (account?: Account): Promise<Client> => {
      const profile = (await marketplace.client.request('/.well-known/ucp')).body as {
        ucp: { services: Record<string, { transport: string; endpoint: string }[]> };
      };
      const mcp = profile.ucp.services['dev.ucp.shopping']!.find((service) => service.transport === 'mcp')!;
      const client = new Client({ name: 'ucp-platform', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(new URL(mcp.endpoint).pathname, marketplace.client.baseUrl),
          {
            requestInit: { headers: account ? { 'x-mcp-api-key': account.apiKey } : {} },
          },
        ),
      );
      clients.push(client);
      return client;
    };
    /** A tool result (not an error) whose structured content, also the text block's JSON, is `schema`-valid. */
    const result = async (
      client: Client,
      name: string,
      args: Record<string, unknown>,
      schema: ValidateFunction = validate,
    ): Promise<UcpCheckout> => {
      const answer = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect({
        name,
        isError: answer.isError ?? false,
        content: answer.isError ? answer.content : [],
      }).toEqual({
        name,
        isError: false,
        content: [],
      });
      // docs/protocols.md §2.2: the UCP payload is the structured content, and the same JSON as text.
      expect(JSON.parse((answer.content[0] as { text: string }).text)).toEqual(answer.structuredContent);
      const valid = schema(answer.structuredContent);
      expect({ name, valid, errors: schema.errors ?? null }).toEqual({ name, valid: true, errors: null });
      return answer.structuredContent as unknown as UcpCheckout;
    };
    /** The text of an isError result. */
    const toolError = async (client: Client, name: string, args: Record<string, unknown>) => {
      const answer = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect({ name, isError: answer.isError }).toEqual({ name, isError: true });
      return (answer.content as { text: string }[]).map((block) => block.text).join('\n');
    };
    /** The JSON-RPC error a call is refused with. */
    const protocolError = (client: Client, name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }).then(
        () => ({ code: 0, kind: 'none' }),
        (error: { code: number; data?: { code: string } }) => ({ code: error.code, kind: error.data?.code }),
      );

    it('drives create → update → complete: an escalation to a quote, then a freight line, each answer valid', async () => {
      const client = await connect(buyer);
      const escalated = await result(client, 'create_checkout', {
        meta: META,
        checkout: {
          line_items: [{ item: { id: productId }, quantity: 150 }],
          buyer: { email: 'mcp-buyer@example.com', first_name: 'Ada', last_name: 'Buyer' },
          context: { address_country: 'US' },
        },
      });
      expect(escalated).toMatchObject({ status: 'requires_escalation', ucp: { version: '2026-04-08' } });
      expect(escalated.messages).toEqual([
        expect.objectContaining({ type: 'error', code: 'requires_quote', severity: 'requires_buyer_input' }),
      ]);
      expect(new URL(escalated.continue_url!).pathname).toBe(`/agents/products/${productId}.md`);
      // Completing it is a business outcome: the session as it is, the refusal first, not an error.
      const refused = await result(client, 'complete_checkout', { id: escalated.id, meta: keyed() });
      expect(refused).toMatchObject({ id: escalated.id, status: 'requires_escalation' });
      expect(refused.messages.map(({ code, severity }) => [code, severity])).toEqual([
        ['not_allowed', 'requires_buyer_input'],
        ['requires_quote', 'requires_buyer_input'],
      ]);

      const updated = await result(client, 'update_checkout', {
        meta: META,
        id: escalated.id,
        checkout: {
          line_items: [{ item: { id: productId }, quantity: 20 }],
          context: { address_country: 'US' },
        },
      });
      expect(updated).toMatchObject({ id: escalated.id, status: 'ready_for_complete', messages: [] });
      expect(updated).not.toHaveProperty('continue_url');
      expect(updated.totals).toEqual([
        { type: 'subtotal', amount: 40_000, display_text: 'Goods' },
        { type: 'fulfillment', amount: 7_500, display_text: 'Freight' },
        { type: 'tax', amount: 0, display_text: 'Tax (invoiced by the seller, not collected here)' },
        { type: 'total', amount: 47_500 },
      ]);

      const key = randomUUID();
      const completed = await result(client, 'complete_checkout', {
        meta: keyed(key),
        id: escalated.id,
        checkout: { payment: {} },
      });
      expect(completed).toMatchObject({ id: escalated.id, status: 'completed' });
      expect(completed.order?.order_ids).toHaveLength(1);
      // A replay with the same key answers the same; the REST binding answers the same session alike.
      expect(await result(client, 'complete_checkout', { meta: keyed(key), id: escalated.id })).toEqual(
        completed,
      );
      expect(await result(client, 'get_checkout', { meta: META, id: escalated.id })).toEqual(completed);
      const viaRest = await marketplace.client.request(
        `/api/ucp/shopping/checkout-sessions/${escalated.id}`,
        {
          headers: { 'x-mcp-api-key': buyer.apiKey },
        },
      );
      expect(viaRest.body).toEqual(completed);
      // Canceling a completed session is refused as a business outcome too.
      const notCanceled = await result(client, 'cancel_checkout', { meta: keyed(), id: escalated.id });
      expect(notCanceled.status).toBe('completed');
      expect(notCanceled.messages[0]).toMatchObject({ code: 'not_allowed', severity: 'unrecoverable' });
    }, 120_000);

    it("answers another buyer's session as not_found, reuses of a key as -32000, and cancels once", async () => {
      const [mine, theirs] = await Promise.all([connect(buyer), connect(otherBuyer)]);
      const open = await result(mine, 'create_checkout', {
        meta: META,
        checkout: { line_items: [{ item: { id: productId }, quantity: 2 }] },
      });
      for (const [name, args] of [
        ['get_checkout', { id: open.id, meta: META }],
        [
          'update_checkout',
          { id: open.id, meta: META, checkout: { line_items: [{ item: { id: productId }, quantity: 3 }] } },
        ],
        ['complete_checkout', { id: open.id, meta: keyed() }],
        ['cancel_checkout', { id: open.id, meta: keyed() }],
      ] as const) {
        const missing = (await result(theirs, name, args, validateError)) as unknown as {
          ucp: { status: string };
          messages: { code: string }[];
        };
        expect({ name, status: missing.ucp.status, code: missing.messages[0]!.code }).toEqual({
          name,
          status: 'error',
          code: 'not_found',
        });
      }
      // Still open and unchanged for its buyer.
      expect(await result(mine, 'get_checkout', { id: open.id, meta: META })).toEqual(open);

      const key = randomUUID();
      const canceled = await result(mine, 'cancel_checkout', { id: open.id, meta: keyed(key) });
      expect(canceled.status).toBe('canceled');
      expect(await result(mine, 'cancel_checkout', { id: open.id, meta: keyed(key) })).toEqual(canceled);
      // The same key for another session's cancel: a reused key, refused (docs/protocols.md §2.2: -32000).
      const other = await result(mine, 'create_checkout', {
        meta: META,
        checkout: { line_items: [{ item: { id: productId }, quantity: 1 }] },
      });
      expect(await protocolError(mine, 'cancel_checkout', { id: other.id, meta: keyed(key) })).toEqual({
        code: -32000,
        kind: 'idempotency_conflict',
      });
      expect((await result(mine, 'get_checkout', { id: other.id, meta: META })).status).toBe(
        'ready_for_complete',
      );
      // No credential, or a seller's: refused before any session is touched.
      expect(await protocolError(await connect(), 'get_checkout', { id: other.id, meta: META })).toEqual({
        code: -32000,
        kind: 'unauthenticated',
      });
      expect(
        await protocolError(await connect(seller), 'create_checkout', {
          meta: META,
          checkout: { line_items: [{ item: { id: productId }, quantity: 1 }] },
        }),
      ).toEqual({ code: -32000, kind: 'forbidden' });
    }, 120_000);

    it('refuses a missing idempotency key, a missing meta and hostile strings with an isError naming the argument', async () => {
      const client = await connect(buyer);
      const open = await result(client, 'create_checkout', {
        meta: META,
        checkout: { line_items: [{ item: { id: productId }, quantity: 1 }] },
      });
      const cases: [string, Record<string, unknown>, string][] = [
        ['complete_checkout', { id: open.id, meta: META }, 'meta/idempotency-key'],
        ['cancel_checkout', { id: open.id, meta: META }, 'meta/idempotency-key'],
        ['get_checkout', { id: open.id }, 'meta'],
        ['get_checkout', { id: "checkout_1' OR '1'='1", meta: META }, 'id'],
        ['get_checkout', { id: `${open.id}\u0000`, meta: META }, 'id'],
        ['complete_checkout', { id: open.id, meta: keyed('k\u0000<script>') }, 'meta/idempotency-key'],
        [
          'create_checkout',
          {
            meta: { 'ucp-agent': { profile: 'javascript:alert(1)' } },
            checkout: { line_items: [{ item: { id: productId }, quantity: 1 }] },
          },
          'meta/ucp-agent/profile',
        ],
        [
          'update_checkout',
          {
            id: open.id,
            meta: META,
            checkout: { line_items: [{ item: { id: '../../etc/passwd' }, quantity: 1 }] },
          },
          'checkout/line_items/0/item/id',
        ],
        [
          'create_checkout',
          {
            meta: META,
            checkout: {
              line_items: [{ item: { id: productId }, quantity: 1 }],
              buyer: { email: 'a@example.com', first_name: '\u0000'.repeat(3) },
            },
          },
          'checkout/buyer/first_name',
        ],
      ];
      for (const [name, args, field] of cases) {
        const text = await toolError(client, name, args);
        expect({ name, field, named: text.includes(field) }).toEqual({ name, field, named: true });
      }
      // None of them touched the session.
      expect(await result(client, 'get_checkout', { id: open.id, meta: META })).toEqual(open);
    }, 120_000);
  });
});
