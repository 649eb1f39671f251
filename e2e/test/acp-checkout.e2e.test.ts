import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}
interface AcpTotal {
  readonly type: string;
  readonly amount: number;
}
interface AcpSession {
  readonly id: string;
  readonly status: string;
  readonly currency: string;
  readonly line_items: {
    id: string;
    item: { id: string; unit_amount: number };
    quantity: number;
    totals: AcpTotal[];
  }[];
  readonly totals: AcpTotal[];
  readonly fulfillment_options: { type: string; id: string; totals: AcpTotal[] }[];
  readonly messages: { type: string; code: string; content: string; param?: string }[];
  readonly links: { type: string; url: string }[];
  readonly capabilities: { payment: { handlers: { id: string }[] } };
  readonly continue_url?: string;
  readonly quote_id?: string;
  readonly order?: { id: string; checkout_session_id: string; permalink_url: string };
  readonly metadata?: { order_ids?: number[]; shipping_country?: string };
}
interface AcpError {
  readonly type: string;
  readonly code: string;
  readonly message: string;
  readonly param?: string;
  readonly supported_versions?: string[];
}
type Answer = { status: number; body: unknown; headers: Headers };

const VERSION = '2026-04-17';

/**
 * ACP's Agentic Checkout API through the gateway (docs/protocols.md §3.2 and §3.3; docs/agents.md,
 * "Protocols"): discovery, a session with a freight line from creation to completion, an escalation to a quote
 * and a session bought at the quote's price, update and cancel, and the adversarial cases (another buyer's
 * session, a replayed Idempotency-Key with another body, missing headers, completing twice, bad input). Every
 * answer is validated against e2e/schemas/acp-checkout.schema.json, the shapes encoded from those sections.
 */
describe('ACP checkout (embedded mode)', () => {
  let marketplace: E2eMarketplace;
  let seller: Account;
  let buyer: Account;
  let otherBuyer: Account;
  let productId: string;
  let base: string;
  let validateSession: ValidateFunction;
  let validateError: ValidateFunction;
  let validateDiscovery: ValidateFunction;

  const call = (
    method: 'GET' | 'POST',
    path: string,
    {
      body,
      apiKey = buyer.apiKey,
      key = method === 'POST' ? randomUUID() : undefined,
      version = VERSION,
      headers = {},
    }: {
      body?: unknown;
      apiKey?: string | null;
      key?: string | null;
      version?: string | null;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Answer> =>
    marketplace.client.request(`${base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(apiKey === null ? {} : { authorization: `Bearer ${apiKey}` }),
        ...(key === null || key === undefined ? {} : { 'idempotency-key': key }),
        ...(version === null ? {} : { 'api-version': version }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  const checked = (validate: ValidateFunction, body: unknown) => {
    const valid = validate(body);
    expect({ valid, errors: validate.errors ?? null, body: valid ? 'ok' : body }).toEqual({
      valid: true,
      errors: null,
      body: 'ok',
    });
  };
  /** A session answer of the expected status, valid against the encoded schema. */
  const session = async (answer: Promise<Answer>, status: number): Promise<AcpSession> => {
    const { status: actual, body } = await answer;
    expect({ status: actual, body: actual === status ? 'ok' : body }).toEqual({ status, body: 'ok' });
    checked(validateSession, body);
    return body as AcpSession;
  };
  /** An ACP Error of the expected status and code, valid against the encoded schema. */
  const error = async (answer: Promise<Answer>, status: number, code: string): Promise<AcpError> => {
    const { status: actual, body } = await answer;
    expect({ status: actual, code: (body as AcpError).code }).toEqual({ status, code });
    checked(validateError, body);
    return body as AcpError;
  };
  const amounts = (totals: readonly AcpTotal[]) =>
    Object.fromEntries(totals.map(({ type, amount }) => [type, amount]));
  const create = (body: unknown, options: Parameters<typeof call>[2] = {}) =>
    call('POST', '/checkout_sessions', { body, ...options });
  const lines = (quantity: number, country = 'US') => ({
    line_items: [{ id: productId, quantity }],
    currency: 'usd',
    capabilities: {},
    fulfillment_details: { address: { country } },
  });

  beforeAll(async () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, allErrors: true });
    addFormats.default(ajv);
    const schema = JSON.parse(
      readFileSync(new URL('../schemas/acp-checkout.schema.json', import.meta.url), 'utf8'),
    ) as { $id: string };
    ajv.addSchema(schema);
    validateSession = ajv.getSchema(schema.$id)!;
    validateError = ajv.getSchema(`${schema.$id}#/$defs/Error`)!;
    validateDiscovery = ajv.getSchema(`${schema.$id}#/$defs/Discovery`)!;
    marketplace = await sharedMarketplace();
    [seller, buyer, otherBuyer] = await Promise.all([
      marketplace.client.createAccount('seller', 'Acp Seller'),
      marketplace.client.createAccount('buyer', 'Acp Buyer'),
      marketplace.client.createAccount('buyer', 'Acp Other Buyer'),
    ]);
    const published = await marketplace.client.publish(seller.apiKey, {
      name: 'Pallets of stackable storage bins',
      description: 'Overstock, 40 pallets',
      imageUrl: marketplace.images.imageUrl('bins'),
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
    // Found as an agent would: the discovery document's api_base_url.
    const discovery = await marketplace.client.request('/.well-known/acp.json');
    expect(discovery.status).toBe(200);
    checked(validateDiscovery, discovery.body);
    const document = discovery.body as { api_base_url: string; capabilities: { services: string[] } };
    expect(document.capabilities.services).toEqual(['checkout']);
    base = new URL(document.api_base_url).pathname;
  }, 300_000);

  afterAll(async () => {
    await marketplace?.stop();
  }, 60_000);

  it('creates a session with a freight line, updates it and completes it once, on invoice terms', async () => {
    const key = randomUUID();
    const answer = await create(lines(5), { key, headers: { 'request-id': 'req-acp-1' } });
    expect(answer.headers.get('idempotency-key')).toBe(key);
    expect(answer.headers.get('request-id')).toBe('req-acp-1');
    const created = await session(Promise.resolve(answer), 201);
    expect(created).toMatchObject({
      status: 'ready_for_payment',
      currency: 'usd',
      line_items: [{ id: 'line_1', item: { id: productId, unit_amount: 2_000 }, quantity: 5 }],
      messages: [],
      capabilities: { payment: { handlers: [{ id: 'invoice_net_30' }] } },
    });
    expect(amounts(created.totals)).toEqual({
      items_base_amount: 10_000,
      discount: 0,
      subtotal: 10_000,
      fulfillment: 7_500,
      tax: 0,
      total: 17_500,
    });
    expect(created.fulfillment_options).toEqual([
      expect.objectContaining({ type: 'shipping', id: 'freight', totals: expect.any(Array) }),
    ]);
    expect(amounts(created.fulfillment_options[0]!.totals)).toMatchObject({ fulfillment: 7_500 });
    // The shipping country comes back in metadata: ACP's fulfillment_details.address is a whole address.
    expect(created).not.toHaveProperty('fulfillment_details');
    expect(created.metadata).toEqual({ shipping_country: 'US' });
    for (const link of created.links) expect((await marketplace.client.request(link.url)).status).toBe(200);

    // The same key and body answer the same session; the key with another body is ACP's 422.
    expect((await session(create(lines(5), { key }), 201)).id).toBe(created.id);
    await error(create(lines(6), { key }), 422, 'idempotency_conflict');

    // Another buyer's session is not there for them, whatever they try.
    const path = `/checkout_sessions/${created.id}`;
    await error(call('GET', path, { apiKey: otherBuyer.apiKey }), 404, 'not_found');
    await error(call('POST', path, { apiKey: otherBuyer.apiKey, body: {} }), 404, 'not_found');
    await error(
      call('POST', `${path}/complete`, {
        apiKey: otherBuyer.apiKey,
        body: { payment_data: { payment_terms: 'net_30' } },
      }),
      404,
      'not_found',
    );
    await error(call('POST', `${path}/cancel`, { apiKey: otherBuyer.apiKey }), 404, 'not_found');
    await error(call('GET', path, { apiKey: null }), 401, 'unauthenticated');

    const updated = await session(
      call('POST', path, { body: { line_items: [{ id: productId, quantity: 6 }] } }),
      200,
    );
    expect(amounts(updated.totals)).toMatchObject({
      items_base_amount: 12_000,
      fulfillment: 7_500,
      total: 19_500,
    });
    expect(await session(call('GET', path), 200)).toEqual(updated);

    const completeKey = randomUUID();
    const complete = (key: string) =>
      call('POST', `${path}/complete`, {
        key,
        body: { payment_data: { payment_terms: 'net_30', purchase_order_number: 'PO-118' } },
      });
    const completed = await session(complete(completeKey), 200);
    expect(completed).toMatchObject({
      id: created.id,
      status: 'completed',
      order: { checkout_session_id: created.id },
    });
    expect(completed.metadata?.order_ids).toHaveLength(1);
    expect(
      (
        await marketplace.client.request(new URL(completed.order!.permalink_url).pathname, {
          headers: { 'x-mcp-api-key': buyer.apiKey },
        })
      ).status,
    ).toBe(200);

    // Completing twice places one order: the same key replays, a new key answers the completed session.
    expect((await session(complete(completeKey), 200)).order).toEqual(completed.order);
    expect((await session(complete(randomUUID()), 200)).order).toEqual(completed.order);
    // The completion's key is that request's: another request with it is ACP's 422.
    await error(call('POST', path, { key: completeKey, body: {} }), 422, 'idempotency_conflict');
    const orders = await marketplace.client.request('/api/orders', {
      headers: { 'x-mcp-api-key': buyer.apiKey },
    });
    const placed = (orders.body as { orders: { order_id: number; product_id: string }[] }).orders.filter(
      (order) => order.product_id === productId,
    );
    expect(placed.map((order) => order.order_id)).toEqual(completed.metadata?.order_ids);

    // A completed session can no longer be canceled (405) nor changed (409).
    await error(call('POST', `${path}/cancel`), 405, 'not_cancelable');
    await error(call('POST', path, { body: {} }), 409, 'conflict');
  }, 120_000);

  it('escalates over the bulk threshold to a quote, and buys at the quote’s price with quote_id', async () => {
    const escalated = await session(create(lines(150)), 201);
    expect(escalated.status).toBe('requires_escalation');
    expect(escalated.messages).toEqual([
      expect.objectContaining({
        type: 'error',
        code: 'quantity_exceeded',
        param: '$.line_items[0].quantity',
      }),
    ]);
    expect(escalated.messages[0]!.content).toMatch(/request_quote/);
    expect(new URL(escalated.continue_url!).pathname).toBe(`/agents/products/${productId}.md`);
    expect((await marketplace.client.request(new URL(escalated.continue_url!).pathname)).status).toBe(200);
    await error(
      call('POST', `/checkout_sessions/${escalated.id}/complete`, {
        body: { payment_data: { payment_terms: 'net_30' } },
      }),
      409,
      'conflict',
    );

    // The quote the message names: the seller counters at $15.00 a unit.
    const quote = await marketplace.client.request('/api/ucp/quotes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mcp-api-key': buyer.apiKey },
      body: JSON.stringify({
        product_id: productId,
        quantity: 150,
        buyer: { email: 'acp-buyer@example.com' },
      }),
    });
    expect(quote.status).toBe(201);
    const quoteId = (quote.body as { quote_request_id: number }).quote_request_id;
    const countered = await marketplace.client.request(`/api/seller/quotes/${quoteId}/respond`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mcp-api-key': seller.apiKey },
      body: JSON.stringify({ action: 'counter', counter_price: 1_500 }),
    });
    expect(countered.status).toBe(200);

    // Another buyer cannot use it: a 400 naming quote_id.
    const foreign = await error(
      create({ ...lines(150), quote_id: String(quoteId) }, { apiKey: otherBuyer.apiKey }),
      400,
      'invalid',
    );
    expect(foreign.param).toBe('$.quote_id');
    const quoted = await session(
      create({
        line_items: [{ id: productId }],
        currency: 'usd',
        capabilities: {},
        quote_id: String(quoteId),
      }),
      201,
    );
    expect(quoted).toMatchObject({
      status: 'ready_for_payment',
      quote_id: String(quoteId),
      line_items: [{ item: { id: productId, unit_amount: 1_500 }, quantity: 150 }],
    });
    expect(amounts(quoted.totals)).toMatchObject({ items_base_amount: 225_000, total: 232_500 });
    const bought = await session(
      call('POST', `/checkout_sessions/${quoted.id}/complete`, {
        body: { payment_data: { handler_id: 'invoice_net_30' } },
      }),
      200,
    );
    expect(bought.status).toBe('completed');
  }, 120_000);

  it('updates an escalated session out of escalation, and cancels an open session once', async () => {
    const escalated = await session(create(lines(150)), 201);
    const path = `/checkout_sessions/${escalated.id}`;
    const fewer = await session(
      call('POST', path, { body: { line_items: [{ id: productId, quantity: 50 }] } }),
      200,
    );
    expect(fewer).toMatchObject({ status: 'ready_for_payment', messages: [] });
    expect(fewer).not.toHaveProperty('continue_url');
    const canceled = await session(
      call('POST', `${path}/cancel`, { body: { intent_trace: { reason_code: 'x' } } }),
      200,
    );
    expect(canceled.status).toBe('canceled');
    expect((await session(call('POST', `${path}/cancel`), 200)).status).toBe('canceled');
    await error(
      call('POST', `${path}/complete`, { body: { payment_data: { payment_terms: 'net_30' } } }),
      409,
      'conflict',
    );
    await error(call('POST', path, { body: {} }), 409, 'conflict');
  }, 60_000);

  it('refuses requests without API-Version or Idempotency-Key, naming what is missing', async () => {
    const missing = await error(create(lines(1), { version: null }), 400, 'missing_api_version');
    expect(missing.supported_versions).toEqual([VERSION]);
    const unsupported = await error(
      create(lines(1), { version: '2025-09-29' }),
      400,
      'unsupported_api_version',
    );
    expect(unsupported.supported_versions).toEqual([VERSION]);
    await error(
      call('GET', '/checkout_sessions/checkout_00000000-0000-4000-8000-000000000000', { version: null }),
      400,
      'missing_api_version',
    );
    const noKey = await error(create(lines(1), { key: null }), 400, 'idempotency_key_required');
    expect(noKey.message).toMatch(/Idempotency-Key/);
    await error(create(lines(1), { key: 'k'.repeat(256) }), 400, 'invalid');
    await error(create(lines(1), { apiKey: null }), 401, 'unauthenticated');
    await error(create(lines(1), { apiKey: 'lmk_aaaaaaaa_not-a-key' }), 401, 'unauthenticated');
    await error(create(lines(1), { apiKey: seller.apiKey }), 403, 'forbidden');
    await error(
      call('GET', '/checkout_sessions/checkout_00000000-0000-4000-8000-000000000000'),
      404,
      'not_found',
    );
  }, 60_000);

  it('answers bad input with a 400 naming the field, never a 5xx', async () => {
    const cases: [unknown, string | undefined][] = [
      [{ ...lines(1), line_items: [{ id: 'product_1\u0000', quantity: 1 }] }, '$.line_items[0].id'],
      [{ ...lines(1), line_items: [{ id: productId, quantity: 1e300 }] }, '$.line_items[0].quantity'],
      [{ ...lines(1), line_items: [{ id: productId, quantity: 0 }] }, '$.line_items[0].quantity'],
      [{ ...lines(1), line_items: [{ id: 'product_99999999999999999', quantity: 1 }] }, '$.line_items[0].id'],
      [{ ...lines(1), line_items: [{ id: 'product_999999999', quantity: 1 }] }, '$.line_items[0].id'],
      [{ ...lines(1), line_items: [] }, '$.line_items'],
      [{ ...lines(1), currency: 'eur' }, '$.currency'],
      [
        { ...lines(1), fulfillment_details: { address: { country: 'USA' } } },
        '$.fulfillment_details.address.country',
      ],
      [{ ...lines(1), buyer: { email: 'not-an-email' } }, '$.buyer.email'],
      [{ ...lines(1), quote_id: 'quote_x' }, '$.quote_id'],
      [{ ...lines(1), buyer: { email: 'a@example.com', full_name: 'Nul\u0000' } }, '$.buyer.full_name'],
      ['[1, 2', undefined],
      [[1, 2], undefined],
    ];
    for (const [body, param] of cases) {
      const answer = await create(body);
      expect({ param, status: answer.status }).toEqual({ param, status: 400 });
      checked(validateError, answer.body);
      if (param !== undefined) expect((answer.body as AcpError).param).toBe(param);
    }
    const open = await session(create(lines(1)), 201);
    const terms = await error(
      call('POST', `/checkout_sessions/${open.id}/complete`, {
        body: { payment_data: { payment_terms: 'net_60' } },
      }),
      400,
      'invalid',
    );
    expect(terms.param).toBe('$.payment_data.payment_terms');
    await error(call('POST', `/checkout_sessions/${open.id}/complete`, { body: {} }), 400, 'invalid');
    const badId = await error(call('GET', '/checkout_sessions/order_1'), 400, 'invalid');
    expect(badId.message).toMatch(/id/);
    await error(call('POST', '/checkout_sessions/order_1/cancel'), 400, 'invalid');
    await error(call('GET', '/checkout_sessions'), 405, 'method_not_allowed');
  }, 60_000);

  it('answers any body on every POST with a session or an ACP Error, never a 5xx', async () => {
    const open = await session(create(lines(1)), 201);
    const member = fc.oneof(
      fc.jsonValue(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom(productId, 'product_0', 1e308, -1, 2 ** 53, null, 'net_30', 'usd', '\u0000'),
    );
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          line_items: fc.oneof(
            member,
            fc.array(fc.record({ id: member, quantity: member }, { requiredKeys: [] })),
          ),
          currency: member,
          buyer: fc.oneof(member, fc.record({ email: member, full_name: member }, { requiredKeys: [] })),
          fulfillment_details: fc.oneof(member, fc.record({ address: fc.record({ country: member }) })),
          quote_id: member,
          payment_data: fc.oneof(member, fc.record({ payment_terms: member, handler_id: member })),
        },
        { requiredKeys: [] },
      ),
    );
    const paths = [
      '/checkout_sessions',
      `/checkout_sessions/${open.id}`,
      `/checkout_sessions/${open.id}/cancel`,
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), body, async (path, input) => {
        const answer = await call('POST', path, { body: input });
        expect(answer.status).toBeLessThan(500);
        checked(answer.status < 300 ? validateSession : validateError, answer.body);
      }),
      { numRuns: 60, seed: 20_261_127 },
    );
  }, 120_000);
});
