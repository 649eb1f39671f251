import { describe, expect, it } from '@jest/globals';
import { AppError, conflict, createLogger, forbidden, notFound } from '@marketplace/platform';
import type { CheckoutSessionView } from '../src/contexts/orders/checkout.schema.js';
import type { OrderOperations } from '../src/contexts/orders/order.operations.js';
import { ucpCheckoutTools } from '../src/contexts/orders/ucp-checkout.tools.js';
import type { Principal } from '../src/edge/account.js';
import { McpDispatcher } from '../src/edge/mcp/dispatcher.js';
import { JsonRpcError } from '../src/edge/mcp/json-rpc-error.js';
import { registryOf } from '../src/edge/mcp/registry.js';
import { McpResources } from '../src/edge/mcp/resources.js';

const BASE = 'https://market.example.com';
const ID = 'checkout_0f6d2c1e-8b7a-4c3d-9e21-5a4b3c2d1e0f';
const META = { 'ucp-agent': { profile: 'https://agent.example/profile.json' } };
const KEYED = { ...META, 'idempotency-key': 'key-1' };
const buyer = { accountId: 7, role: 'buyer' } as Principal;

const session = (status: CheckoutSessionView['status'], messages: string[] = []): CheckoutSessionView => ({
  id: ID,
  status,
  line_items: [
    {
      product_id: 'product_7',
      title: 'Earbuds',
      seller_id: 3,
      quantity: 4,
      unit_price: 1250,
      line_total: 5000,
      freight: 7500,
    },
  ],
  totals: { subtotal: 5000, freight: 7500, total: 12500 },
  currency: 'USD',
  messages,
  payment_terms: 'net_30',
  expires_at: '2026-01-02T09:00:00.000Z',
  order_ids: [],
});

/** Order operations that record their calls and answer, or throw, what each test sets. */
const fakeOrders = (answer: { readonly fail?: Error; readonly current?: CheckoutSessionView } = {}) => {
  const calls: { operation: string; args: unknown[] }[] = [];
  const run =
    (operation: string, value: unknown) =>
    async (...args: unknown[]) => {
      calls.push({ operation, args });
      if (answer.fail) throw answer.fail;
      return value;
    };
  const orders = {
    createCheckout: run('create', session('ready_for_complete')),
    updateCheckout: run('update', session('ready_for_complete')),
    cancelCheckout: run('cancel', session('canceled')),
    completeCheckout: run('complete', { checkout: session('completed'), orders: [{ order_id: 41 }] }),
    getCheckout: async (...args: unknown[]) => {
      calls.push({ operation: 'get', args });
      // A refused operation reads the session back (`current`); otherwise reading fails as the rest does.
      if (answer.fail && !answer.current) throw answer.fail;
      return { checkout: answer.current ?? session('ready_for_complete'), orders: [] };
    },
  } as unknown as OrderOperations;
  const dispatcher = new McpDispatcher(
    registryOf(ucpCheckoutTools(orders, BASE)),
    new McpResources([], []),
    createLogger({ service: 'gateway', level: 'silent' }),
  );
  return { calls, dispatcher };
};

describe("UCP checkout's MCP binding (docs/protocols.md §2.2-2.3)", () => {
  it('passes meta["idempotency-key"] to the order service and answers the UCP checkout as structured content', async () => {
    const { calls, dispatcher } = fakeOrders();
    const result = await dispatcher.callTool(buyer, 'complete_checkout', { id: ID, meta: KEYED });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({
      id: ID,
      status: 'completed',
      order: { id: '41', permalink_url: `${BASE}/api/orders/41` },
    });
    expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent);
    expect(calls).toEqual([{ operation: 'complete', args: [buyer, ID, 'mcp-ucp-checkout', 'key-1'] }]);
  });

  it('requires the idempotency key to complete and to cancel, naming it', async () => {
    const { calls, dispatcher } = fakeOrders();
    for (const name of ['complete_checkout', 'cancel_checkout']) {
      const result = await dispatcher.callTool(buyer, name, { id: ID, meta: META });
      expect({ name, isError: result.isError }).toEqual({ name, isError: true });
      expect(result.content[0]!.text).toContain('meta/idempotency-key');
    }
    expect(calls).toEqual([]);
  });

  it('answers a session not found (another buyer’s) as a UCP error response, not a tool error', async () => {
    const { dispatcher } = fakeOrders({ fail: notFound(`checkout session ${ID} not found`) });
    const result = await dispatcher.callTool(buyer, 'get_checkout', { id: ID, meta: META });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({
      ucp: { version: '2026-04-08', status: 'error' },
      messages: [
        {
          type: 'error',
          code: 'not_found',
          content: `checkout session ${ID} not found`,
          severity: 'unrecoverable',
        },
      ],
    });
  });

  it('answers an operation the state refuses with the session as it is now, the refusal first', async () => {
    const escalated = session('requires_escalation', ['more than 100 units of product_7: request_quote']);
    const { calls, dispatcher } = fakeOrders({
      fail: conflict('the session needs a quote'),
      current: escalated,
    });
    const result = await dispatcher.callTool(buyer, 'complete_checkout', { id: ID, meta: KEYED });
    expect(result.structuredContent).toMatchObject({
      id: ID,
      status: 'requires_escalation',
      continue_url: `${BASE}/agents/products/product_7.md`,
      messages: [
        { code: 'not_allowed', content: 'the session needs a quote', severity: 'requires_buyer_input' },
        { code: 'requires_quote', severity: 'requires_buyer_input' },
      ],
    });
    expect(calls.map(({ operation }) => operation)).toEqual(['complete', 'get']);
  });

  it('answers refusals of the caller as JSON-RPC -32000 with the kind, and a failure as -32603', async () => {
    const cases: [Error, number, string | undefined][] = [
      [forbidden('only buyer accounts check out'), -32000, 'forbidden'],
      [
        new AppError('idempotency_conflict', 'key-1 was used for another request'),
        -32000,
        'idempotency_conflict',
      ],
      [new AppError('rate_limited', 'rate limit reached'), -32000, 'rate_limited'],
      [new Error('database gone'), -32603, undefined],
    ];
    for (const [fail, code, kind] of cases) {
      const { dispatcher } = fakeOrders({ fail });
      const thrown = await dispatcher.callTool(buyer, 'cancel_checkout', { id: ID, meta: KEYED }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(thrown).toBeInstanceOf(JsonRpcError);
      const { code: actual, data } = thrown as JsonRpcError;
      expect({ code: actual, kind: (data as { code?: string } | undefined)?.code }).toEqual({ code, kind });
    }
    // Without a credential, a buyer tool is refused before the order service is asked.
    const { calls, dispatcher } = fakeOrders();
    await expect(
      dispatcher.callTool(undefined, 'get_checkout', { id: ID, meta: META }),
    ).rejects.toMatchObject({
      code: -32000,
      data: { code: 'unauthenticated' },
    });
    expect(calls).toEqual([]);
  });

  it('refuses hostile arguments with an isError naming each one, and never asks the order service', async () => {
    const { calls, dispatcher } = fakeOrders();
    const cases: [string, Record<string, unknown>, string][] = [
      ['get_checkout', { id: "checkout_1' OR 1=1 --", meta: META }, 'id'],
      ['get_checkout', { id: `${ID}\u0000`, meta: META }, 'id'],
      [
        'cancel_checkout',
        { id: ID, meta: { ...META, 'idempotency-key': 'k\u0000' } },
        'meta/idempotency-key',
      ],
      [
        'create_checkout',
        { checkout: {}, meta: { 'ucp-agent': { profile: 'javascript:alert(1)' } } },
        'profile',
      ],
      [
        'create_checkout',
        {
          checkout: {
            line_items: [{ item: { id: 'product_1' }, quantity: 1 }],
            buyer: { email: 'a@example.com', first_name: 'x'.repeat(10_000) },
          },
          meta: META,
        },
        'checkout/buyer/first_name',
      ],
      [
        'update_checkout',
        { id: ID, checkout: { line_items: [{ item: { id: '<script>' }, quantity: 1 }] }, meta: META },
        'checkout/line_items/0/item/id',
      ],
    ];
    for (const [name, args, field] of cases) {
      const result = await dispatcher.callTool(buyer, name, args);
      expect({ name, field, isError: result.isError }).toEqual({ name, field, isError: true });
      expect({ name, field, named: result.content[0]!.text.includes(field) }).toEqual({
        name,
        field,
        named: true,
      });
    }
    expect(calls).toEqual([]);
  });
});
