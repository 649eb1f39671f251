import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import fc from 'fast-check';
import { readFile } from 'node:fs/promises';
import { XMLParser } from 'fast-xml-parser';
import { validateXML } from 'xmllint-wasm';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';
import { eventually } from '../src/harness/processes.js';

/** Cases per tool of the fuzzed-arguments tests: 12 in `pnpm test`, FUZZ_RUNS=1000 for the nightly size. */
const TOOL_FUZZ_RUNS = Number(process.env['FUZZ_RUNS'] ?? 12);

/**
 * The sixteen tools of docs/specification.md, "MCP tools", the buyer's quote tools ("Quotes"), the saved searches'
 * secret rotation (docs/security.md, API2), the order lifecycle's ("Order lifecycle"), the seller's read-back
 * ("Listings") and UCP's catalog and checkout bindings (docs/agents.md, "Protocols"), by who may call them.
 */
const SPEC_TOOLS = {
  none: [
    'search_inventory',
    'search_inventory_semantic',
    'get_product_details',
    'request_quote',
    'get_quote_status',
    'subscribe_to_query',
    'rotate_webhook_secret',
    'search_catalog',
    'lookup_catalog',
    'get_product',
    'create_checkout',
  ],
  buyer: [
    'quick_buy',
    'get_order_status',
    'open_dispute',
    'claim_quote',
    'list_my_quotes',
    'accept_quote_and_pay',
    'list_my_orders',
    'confirm_order',
    'cancel_order',
    'respond_to_counter_offer',
    'preview_checkout',
    'confirm_purchase',
    'get_checkout',
    'update_checkout',
    'complete_checkout',
    'cancel_checkout',
  ],
  seller: [
    'create_listing',
    'get_pricing_recommendation',
    'get_quote_requests',
    'respond_to_quote',
    'bulk_update_listings',
    'bulk_mark_shipped',
    'bulk_export_orders',
    'seller_inbox_summarise',
    'get_seller_orders',
    'seller_cancel_order',
    'list_my_listings',
    'update_listing',
    'withdraw_listing',
    'set_listing_shipping',
    'bulk_upsert_listings',
  ],
} as const;
const ALL_TOOLS = Object.values(SPEC_TOOLS).flat();
/**
 * UCP's checkout binding, whose refusals of the caller are JSON-RPC errors (-32000), not isError results
 * (docs/protocols.md §2.2); its bad arguments are isError results as every tool's.
 */
const UCP_CHECKOUT_TOOLS: readonly string[] = [
  'create_checkout',
  'get_checkout',
  'update_checkout',
  'complete_checkout',
  'cancel_checkout',
];

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

/**
 * MCP conformance with real clients against `pnpm start`: the SDK's Client over StreamableHTTPClientTransport
 * lists and calls every tool (every structuredContent checked against the tool's output schema), the
 * credential rules of each tool, fuzzed arguments (never a protocol error or a 5xx), the resources, and the
 * agent-facing documents over a real catalog (feed pages, sitemap, markdown renditions).
 */
describe('MCP conformance (embedded mode)', () => {
  let marketplace: E2eMarketplace;
  let seller: Account;
  let otherSeller: Account;
  let buyer: Account;
  let tools: Tool[];
  const clients: Client[] = [];
  const publicIds: string[] = [];
  let privateId: string;
  let instantId: string;
  const validator = new AjvJsonSchemaValidator();
  const outputCheckOf = (tool: Tool) =>
    validator.getValidator(tool.outputSchema as Parameters<typeof validator.getValidator>[0]);

  const connect = async (account?: Account): Promise<Client> => {
    const client = new Client({ name: 'conformance', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl), {
        requestInit: { headers: account ? { 'x-mcp-api-key': account.apiKey } : {} },
      }),
    );
    clients.push(client);
    return client;
  };
  let anonymous: Client;
  let asSeller: Client;
  let asBuyer: Client;

  /** Calls a tool that must succeed; its structured content must match the tool's published output schema. */
  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect({ name, isError: result.isError ?? false, content: result.isError ? result.content : [] }).toEqual(
      {
        name,
        isError: false,
        content: [],
      },
    );
    const tool = tools.find((candidate) => candidate.name === name)!;
    const check = outputCheckOf(tool)(result.structuredContent);
    expect({ name, valid: check.valid, error: check.errorMessage }).toEqual({
      name,
      valid: true,
      error: undefined,
    });
    // Older clients read the text block: the same JSON.
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
    return result.structuredContent as Record<string, unknown>;
  };
  const failure = async (client: Client, name: string, args: Record<string, unknown>): Promise<string> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect({ name, isError: result.isError }).toEqual({ name, isError: true });
    return (result.content as { text: string }[]).map((block) => block.text).join('\n');
  };

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
    [seller, otherSeller, buyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Mcp Seller'),
      marketplace.client.createAccount('seller', 'Mcp Other Seller'),
      marketplace.client.createAccount('buyer', 'Mcp Buyer'),
    ]);
    const publish = async (listing: Record<string, unknown>): Promise<string> => {
      const published = await marketplace.client.publish(seller.apiKey, {
        description: 'Overstock lot, boxed',
        imageUrl: marketplace.images.imageUrl(`lot${publicIds.length}`),
        price: 12.5,
        quantity: 400,
        condition: 'overstock',
        promotePublicly: true,
        ...listing,
      });
      expect({ status: published.status, body: published.body }).toMatchObject({ status: 201 });
      return published.body.id;
    };
    instantId = await publish({
      name: 'Vantrell wireless earbuds',
      instantCheckout: true,
      originalRetailPrice: 40,
    });
    publicIds.push(instantId);
    publicIds.push(await publish({ name: 'Vantrell office chairs', category: 'office_supplies' }));
    publicIds.push(await publish({ name: 'Vantrell cutting boards', category: 'kitchenware' }));
    privateId = await publish({ name: 'Vantrell private lot', promotePublicly: false });
    await eventually(
      async () =>
        (await marketplace.client.search({ q: 'vantrell' })).pagination.total === 3 ? true : undefined,
      { timeoutMs: 15_000, describe: () => `listings not searchable:\n${marketplace.logs()}` },
    );
    [anonymous, asSeller, asBuyer] = await Promise.all([connect(), connect(seller), connect(buyer)]);
    tools = (await anonymous.listTools()).tools;
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await marketplace?.stop();
  }, 60_000);

  describe('tools/list', () => {
    it('lists exactly the tools of docs/specification.md, "MCP tools", and the UCP catalog tools, each with object schemas, annotations and its auth', () => {
      expect(tools.map((tool) => tool.name).sort()).toEqual([...ALL_TOOLS].sort());
      for (const [auth, names] of Object.entries(SPEC_TOOLS)) {
        for (const name of names) {
          const tool = tools.find((candidate) => candidate.name === name)!;
          expect({ name, auth: tool._meta?.['marketplace/auth'] }).toEqual({ name, auth });
          expect(tool.inputSchema.type).toBe('object');
          expect(tool.outputSchema?.type).toBe('object');
          expect(tool.annotations).toEqual({
            title: expect.any(String),
            readOnlyHint: expect.any(Boolean),
            destructiveHint: expect.any(Boolean),
            idempotentHint: expect.any(Boolean),
            openWorldHint: expect.any(Boolean),
          });
        }
      }
    });

    it('marks reads read-only and writes as not', () => {
      const hints = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint]));
      for (const name of [
        'search_inventory',
        'get_product_details',
        'get_order_status',
        'bulk_export_orders',
        'list_my_orders',
        'get_seller_orders',
      ]) {
        expect({ name, readOnly: hints[name] }).toEqual({ name, readOnly: true });
      }
      for (const name of [
        'create_listing',
        'request_quote',
        'quick_buy',
        'open_dispute',
        'bulk_mark_shipped',
        'cancel_order',
        'seller_cancel_order',
        'confirm_order',
      ]) {
        expect({ name, readOnly: hints[name] }).toEqual({ name, readOnly: false });
      }
    });
  });

  describe('tools/call', () => {
    it('runs the catalog tools', async () => {
      const page = await call(anonymous, 'search_inventory', { query: 'vantrell', limit: 5 });
      expect(page).toMatchObject({ pagination: { total: 3 } });
      const discounted = await call(anonymous, 'search_inventory', { query: 'vantrell', min_discount: 50 });
      expect((discounted['products'] as { id: string }[]).map((p) => p.id)).toEqual([instantId]);
      const semantic = await call(anonymous, 'search_inventory_semantic', { query: 'earphones', limit: 3 });
      expect(semantic['products']).toEqual(expect.any(Array));
      expect(await call(anonymous, 'get_product_details', { product_id: instantId })).toMatchObject({
        id: instantId,
        pricing: { instant_checkout: true },
      });
      await call(asSeller, 'get_pricing_recommendation', {
        category: 'electronics',
        condition: 'overstock',
        original_retail: 4_000,
        quantity: 100,
      });
    });

    it('runs the seller listing tools', async () => {
      const created = await call(asSeller, 'create_listing', {
        name: 'Vantrell desk lamps',
        category: 'office_supplies',
        condition: 'shelf_pulls',
        quantity: 40,
        price_per_unit: 900,
      });
      const number = Number(String(created['id']).replace('product_', ''));
      const updated = await call(asSeller, 'bulk_update_listings', {
        product_ids: [number],
        mode: 'price_set',
        value: 850,
      });
      expect(updated).toMatchObject({ updated: [{ pricing: { unit_price: 850 } }], failures: [] });
      const notMine = await call(await connect(otherSeller), 'bulk_update_listings', {
        product_ids: [number],
        mode: 'moq_set',
        value: 5,
      });
      expect(notMine).toMatchObject({ updated: [] });
      const mine = await eventually(
        async () => {
          const page = await call(asSeller, 'list_my_listings', { sku: String(created['sku']) });
          return (page['total'] as number) > 0 ? page : undefined;
        },
        { timeoutMs: 10_000, describe: () => 'list_my_listings never showed the new listing' },
      );
      expect(mine).toMatchObject({ listings: [{ id: created['id'] }], total: 1, next_cursor: null });
      const theirList = await call(await connect(otherSeller), 'list_my_listings', {
        sku: String(created['sku']),
      });
      expect(theirList).toMatchObject({ total: 0 });
      const changed = await call(asSeller, 'update_listing', {
        product_id: created['id'],
        price_per_unit: 800,
        quantity: 35,
        expected_version: 2,
      });
      expect(changed).toMatchObject({ price: 800, quantity_available: 35, version: 3 });
      const stale = await failure(asSeller, 'update_listing', {
        product_id: created['id'],
        expected_version: 2,
      });
      expect(stale).toMatch(/version/);
      // Another seller's listing is answered as a missing one, word for word (docs/specification.md, "Ids in paths").
      const asOther = await connect(otherSeller);
      const missingId = 'product_987654321';
      for (const [tool, extra] of [
        ['withdraw_listing', {}],
        ['update_listing', { price_per_unit: 1 }],
        ['update_listing', { price_per_unit: 1, expected_version: 1 }],
        ['set_listing_shipping', { mode: 'included' }],
      ] as const) {
        const theirs = await failure(asOther, tool, { product_id: created['id'], ...extra });
        const none = await failure(asOther, tool, { product_id: missingId, ...extra });
        expect(theirs.replaceAll(String(created['id']), missingId)).toBe(none);
        expect(theirs).toMatch(/does not exist/);
      }
      const withdrawn = await call(asSeller, 'withdraw_listing', { product_id: created['id'] });
      expect(withdrawn).toMatchObject({ id: created['id'], status: 'withdrawn' });
    });

    it('runs the quote tools: request, list, respond', async () => {
      await call(anonymous, 'request_quote', {
        product_id: publicIds[1],
        quantity: 5_000,
        buyer_email: 'agent@example.com',
        target_price: 700,
      });
      const pending = await call(asSeller, 'get_quote_requests', {});
      const [request] = pending['quote_requests'] as { quote_request_id: number }[];
      expect(request).toBeDefined();
      await call(asSeller, 'respond_to_quote', {
        quote_request_id: request!.quote_request_id,
        action: 'counter',
        counter_price: 800,
        message: 'Best we can do',
      });
      await call(asSeller, 'get_quote_requests', { status: 'responded' });
      // A buyer account's request: the buyer counters the seller's counter-offer.
      const mine = await call(asBuyer, 'request_quote', {
        product_id: publicIds[1],
        quantity: 300,
        buyer_email: 'agent@example.com',
      });
      const id = mine['quote_request_id'] as number;
      await call(asSeller, 'respond_to_quote', {
        quote_request_id: id,
        action: 'counter',
        counter_price: 900,
      });
      const countered = await call(asBuyer, 'respond_to_counter_offer', {
        quote_request_id: id,
        action: 'counter',
        counter_price: 850,
      });
      expect(countered).toMatchObject({ negotiation_state: 'awaiting_seller' });
    });

    it('runs the order tools through the order lifecycle, up to a dispute', async () => {
      const bought = await call(asBuyer, 'quick_buy', {
        product_id: instantId,
        quantity: 2,
        buyer_email: 'mcp.buyer@example.com',
        shipping_country: 'US',
      });
      const orderId = (bought['order'] as { order_id: number }).order_id;
      await call(asBuyer, 'get_order_status', { order_id: orderId });
      await call(asSeller, 'seller_inbox_summarise', { window_hours: 72, limit: 5 });
      await call(asSeller, 'bulk_mark_shipped', {
        order_ids: [orderId],
        tracking_number: '1Z999',
        carrier_name: 'UPS',
      });
      const exported = await call(asSeller, 'bulk_export_orders', { order_ids: [orderId] });
      expect(JSON.stringify(exported)).toContain('Order ID,Product,Buyer,Quantity,Total,Status,Date');
      const delivered = await marketplace.client.request(`/api/seller/orders/${orderId}/mark-delivered`, {
        method: 'POST',
        headers: { 'x-mcp-api-key': seller.apiKey },
      });
      expect(delivered.status).toBeLessThan(300);
      await call(asBuyer, 'open_dispute', {
        order_id: orderId,
        reason: 'damaged',
        description: 'Two units arrived crushed',
        requested_action: 'partial_refund',
      });
      // The order is no longer delivered-pending-confirmation: a second dispute says why.
      expect(
        await failure(asBuyer, 'open_dispute', { order_id: orderId, reason: 'other', description: 'again' }),
      ).not.toHaveLength(0);
    });

    it('runs the order lifecycle tools: lists, cancellation by either side, early confirmation', async () => {
      const buy = async () => {
        const bought = await call(asBuyer, 'quick_buy', {
          product_id: instantId,
          quantity: 1,
          buyer_email: 'mcp.buyer@example.com',
        });
        return (bought['order'] as { order_id: number }).order_id;
      };
      const [first, second, third] = [await buy(), await buy(), await buy()];
      const mine = await call(asBuyer, 'list_my_orders', { status: 'awaiting_shipment', limit: 100 });
      expect((mine['orders'] as { order_id: number }[]).map((o) => o.order_id)).toEqual(
        expect.arrayContaining([first, second, third]),
      );
      const sellers = await call(asSeller, 'get_seller_orders', { limit: 2 });
      expect(sellers['next_cursor']).toEqual(expect.any(String));
      expect(await call(asBuyer, 'cancel_order', { order_id: first, reason: 'ordered twice' })).toMatchObject(
        {
          status: 'cancelled',
        },
      );
      expect(
        await call(asSeller, 'seller_cancel_order', { order_id: second, reason: 'cannot fulfil' }),
      ).toMatchObject({ status: 'cancelled', cancellation: { by: 'seller' } });
      expect(await failure(asSeller, 'seller_cancel_order', { order_id: third, reason: ' ' })).toMatch(
        /reason/,
      );
      await call(asSeller, 'bulk_mark_shipped', { order_ids: [third] });
      expect(await failure(asBuyer, 'cancel_order', { order_id: third })).not.toHaveLength(0);
      const delivered = await marketplace.client.request(`/api/seller/orders/${third}/mark-delivered`, {
        method: 'POST',
        headers: { 'x-mcp-api-key': seller.apiKey },
      });
      expect(delivered.status).toBe(200);
      expect(await call(asBuyer, 'confirm_order', { order_id: third })).toMatchObject({
        status: 'completed',
      });
    });

    it('takes a 200-id bulk call through /mcp', async () => {
      const ids = Array.from({ length: 200 }, (_, index) => 1_000_000 + index);
      const result = (await asSeller.callTool({
        name: 'bulk_export_orders',
        arguments: { order_ids: ids },
      })) as CallToolResult;
      // None of these orders is the seller's: whatever the tool answers, it answers as a tool result.
      expect(result.content.length).toBeGreaterThan(0);
    });

    it('subscribes to a query and reads the subscription resource', async () => {
      const subscribed = await call(asBuyer, 'subscribe_to_query', {
        query: { category: 'electronics', search: 'vantrell' },
        channels: [{ type: 'mcp_resource' }],
      });
      const id = String(subscribed['id'] ?? subscribed['subscription_id']);
      const read = await asBuyer.readResource({ uri: `marketplace://subscriptions/${id}` });
      expect(read.contents[0]).toMatchObject({ mimeType: 'application/json' });
      // Only its owner reads it.
      await expect(asSeller.readResource({ uri: `marketplace://subscriptions/${id}` })).rejects.toThrow();
    });
  });

  describe('credentials', () => {
    it.each(SPEC_TOOLS.seller.map((name) => [name]))(
      '%s without a key, or with a buyer key, is an isError',
      async (name) => {
        expect(await failure(anonymous, name, {})).toMatch(/X-MCP-API-Key/);
        expect(await failure(asBuyer, name, {})).toMatch(/seller/i);
      },
    );

    it.each(SPEC_TOOLS.buyer.filter((name) => !UCP_CHECKOUT_TOOLS.includes(name)).map((name) => [name]))(
      '%s without a credential, or with a seller key, is an isError',
      async (name) => {
        expect(await failure(anonymous, name, {})).toMatch(/X-MCP-API-Key|X-Agent-Token/);
        expect(await failure(asSeller, name, {})).toMatch(/buyer/i);
      },
    );

    it.each(UCP_CHECKOUT_TOOLS.map((name) => [name]))(
      '%s refuses a seller key, and a buyer tool a missing credential, with JSON-RPC -32000 naming the kind',
      async (name) => {
        // A seller is refused by create_checkout's handler, after its arguments are checked; by the others' auth.
        const args =
          name === 'create_checkout'
            ? {
                checkout: { line_items: [{ item: { id: instantId }, quantity: 1 }] },
                meta: { 'ucp-agent': { profile: 'https://agent.example/profile.json' } },
              }
            : {};
        const refusal = async (client: Client) => {
          const error = await client.callTool({ name, arguments: args }).then(
            () => undefined,
            (thrown: unknown) => thrown as { code: number; data?: { code: string } },
          );
          return { code: error?.code, kind: error?.data?.code };
        };
        expect(await refusal(asSeller)).toEqual({ code: -32000, kind: 'forbidden' });
        if (name !== 'create_checkout') {
          expect(await refusal(anonymous)).toEqual({ code: -32000, kind: 'unauthenticated' });
        }
      },
    );

    it("keeps a buyer out of another buyer's order", async () => {
      const other = await connect(await marketplace.client.createAccount('buyer', 'Mcp Other Buyer'));
      const bought = await call(asBuyer, 'quick_buy', {
        product_id: instantId,
        quantity: 1,
        buyer_email: 'mcp.buyer@example.com',
      });
      const orderId = (bought['order'] as { order_id: number }).order_id;
      expect(await failure(other, 'get_order_status', { order_id: orderId })).not.toHaveLength(0);
    });
  });

  describe('invalid arguments', () => {
    it.each(ALL_TOOLS.map((name) => [name]))(
      '%s answers bad arguments with an isError that names them',
      async (name) => {
        const tool = tools.find((candidate) => candidate.name === name)!;
        const client = (SPEC_TOOLS.seller as readonly string[]).includes(name)
          ? asSeller
          : (SPEC_TOOLS.buyer as readonly string[]).includes(name)
            ? asBuyer
            : anonymous;
        const properties = Object.keys(tool.inputSchema.properties ?? {});
        const text = await failure(client, name, { [properties[0]!]: { not: 'valid' } });
        expect({ name, namesOne: properties.some((property) => text.includes(property)) }).toEqual({
          name,
          namesOne: true,
        });
      },
    );
  });

  describe('fuzzed arguments (fast-check)', () => {
    /** Values of every JSON type, some of them plausible for the tools' parameters. */
    const jsonValue = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.integer({ min: -5, max: 300 }),
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.boolean(),
      fc.constant(null),
      fc.constantFrom('product_1', 'electronics', 'overstock', 'price_set', 'counter', 'damaged', 'a@b.co'),
      fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
    );

    const rawCall = async (apiKey: string | undefined, name: string, args: unknown) => {
      const response = await fetch(new URL('/mcp', marketplace.client.baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(apiKey ? { 'x-mcp-api-key': apiKey } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
        signal: AbortSignal.timeout(10_000),
      });
      return {
        status: response.status,
        body: (await response.json()) as { result?: CallToolResult; error?: unknown },
      };
    };

    it.each(ALL_TOOLS.map((name) => [name]))(
      '%s: arbitrary arguments give a tool result, never a protocol error or a 5xx',
      async (name) => {
        const tool = tools.find((candidate) => candidate.name === name)!;
        const keys = [...Object.keys(tool.inputSchema.properties ?? {}), 'unexpected'];
        // Fuzzed withdrawals and updates run as a seller with no listings this file reads later.
        const apiKey = ['update_listing', 'withdraw_listing', 'set_listing_shipping'].includes(name)
          ? otherSeller.apiKey
          : (SPEC_TOOLS.seller as readonly string[]).includes(name)
            ? seller.apiKey
            : (SPEC_TOOLS.buyer as readonly string[]).includes(name)
              ? buyer.apiKey
              : undefined;
        await fc.assert(
          fc.asyncProperty(
            fc.dictionary(fc.constantFrom(...keys), jsonValue, { maxKeys: keys.length }),
            async (args) => {
              const { status, body } = await rawCall(apiKey, name, args);
              expect({ status, error: body.error }).toEqual({ status: 200, error: undefined });
              expect(Array.isArray(body.result?.content)).toBe(true);
              // A result that is not an error keeps to the tool's published output schema.
              if (body.result?.isError !== true) {
                const check = outputCheckOf(tool)(body.result?.structuredContent);
                expect({ name, error: check.errorMessage }).toEqual({ name, error: undefined });
              }
            },
          ),
          { numRuns: TOOL_FUZZ_RUNS },
        );
      },
      Math.max(60_000, TOOL_FUZZ_RUNS * 1_000),
    );
  });

  describe('resources', () => {
    it('lists stats, categories and the subscription template, and reads stats and categories', async () => {
      // A quote request of its own, so the 24-hour count holds whichever tests ran before.
      await call(anonymous, 'request_quote', {
        product_id: publicIds[2],
        quantity: 500,
        buyer_email: 'stats@example.com',
      });
      const { resources } = await anonymous.listResources();
      expect(resources.map((resource) => resource.uri).sort()).toEqual([
        'marketplace://categories',
        'marketplace://stats',
      ]);
      const { resourceTemplates } = await anonymous.listResourceTemplates();
      expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual([
        'marketplace://subscriptions/{id}',
      ]);
      const stats = JSON.parse(
        ((await anonymous.readResource({ uri: 'marketplace://stats' })).contents[0] as { text: string }).text,
      ) as { listings: { public_products: number }; last_24_hours: { quote_requests: number | null } };
      expect(stats.listings.public_products).toBeGreaterThanOrEqual(3);
      expect(stats.last_24_hours.quote_requests).toBeGreaterThanOrEqual(1);
      const categories = JSON.parse(
        ((await anonymous.readResource({ uri: 'marketplace://categories' })).contents[0] as { text: string })
          .text,
      ) as { categories: { id: string }[] };
      expect(categories.categories.map((category) => category.id)).toContain('kitchenware');
    });
  });

  describe('agent-facing documents over the real catalog', () => {
    interface FeedPage {
      items: { id: string; markdown_link: string; availability: string }[];
      next_cursor: string | null;
    }

    it('pages the ACP feed by cursor: public listings only, each once, in a stable order', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${encodeURIComponent(cursor)}`;
        const answer = await marketplace.client.request(`/acp/feed.json${query}`);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('cache-control')).toBe('public, max-age=60');
        const page = answer.body as FeedPage;
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((item) => item.id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual(expect.arrayContaining(publicIds));
      expect(seen).not.toContain(privateId);
      expect(new Set(seen).size).toBe(seen.length);
      const numbers = seen.map((id) => Number(id.replace('product_', '')));
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      expect((await marketplace.client.request('/acp/feed.json?limit=201')).status).toBe(400);
    });

    it('lists every public listing in an agent sitemap valid against the sitemaps.org schema, each with a markdown page', async () => {
      const answer = await marketplace.client.request('/agents/sitemap.xml');
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/xml/);
      const xml = answer.body as string;
      // libxml2's own XSD validation (compiled to WebAssembly), against the protocol's published schema.
      const schema = await readFile(
        new URL('../../services/gateway/test/fixtures/sitemap-0.9.xsd', import.meta.url),
        'utf8',
      );
      const validation = await validateXML({ xml: { fileName: 'sitemap.xml', contents: xml }, schema });
      expect(validation.errors).toEqual([]);
      expect(validation.valid).toBe(true);
      // The same check refuses a sitemap that breaks the schema, so a pass above means something.
      const broken = xml.replace(/<lastmod>[^<]*<\/lastmod>/, '<lastmod>yesterday</lastmod>');
      expect((await validateXML({ xml: { fileName: 'broken.xml', contents: broken }, schema })).valid).toBe(
        false,
      );
      const parsed = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'url' }).parse(
        xml,
      ) as {
        urlset: { '@_xmlns': string; url: { loc: string; lastmod?: string }[] };
      };
      // The sitemaps.org rules: the namespace, absolute URLs on our host, W3C datetimes, at most 50,000 URLs.
      expect(parsed.urlset['@_xmlns']).toBe('http://www.sitemaps.org/schemas/sitemap/0.9');
      const [guide, ...urls] = parsed.urlset.url;
      expect(new URL(guide!.loc).pathname).toBe('/llms.txt');
      expect(urls.length).toBeLessThan(50_000);
      for (const { loc, lastmod } of urls) {
        expect(new URL(loc).pathname).toMatch(/^\/agents\/products\/product_[0-9]+\.md$/);
        expect(loc.length).toBeLessThan(2_048);
        expect(lastmod).toMatch(/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$/);
      }
      const listed = urls.map(({ loc }) => new URL(loc).pathname.replace(/^\/agents\/products\/|\.md$/g, ''));
      expect(listed).toEqual(expect.arrayContaining(publicIds));
      expect(listed).not.toContain(privateId);
      for (const { loc } of urls.slice(0, 3)) {
        const page = await marketplace.client.request(new URL(loc).pathname);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/markdown/);
        expect(page.body as string).toMatch(/^# /);
      }
      expect((await marketplace.client.request(`/agents/products/${privateId}.md`)).status).toBe(404);
    });
  });
});
