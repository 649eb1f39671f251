import { describe, expect, it } from '@jest/globals';
import {
  acpCheckoutView,
  acpCompleteSchema,
  acpCreateSchema,
  acpErrorOfProblem,
  acpParamOf,
  acpUpdateSchema,
  checkoutBodyOfAcp,
  checkoutChangesOfAcp,
} from '../src/contexts/orders/acp-checkout.js';
import type { CheckoutSessionView } from '../src/contexts/orders/checkout.schema.js';
import type { OrderView } from '../src/contexts/orders/order.schema.js';
import { Problems } from '../src/edge/http/problem.js';
import { validationError, conflict } from '@marketplace/platform';

const BASE = 'https://market.example.com';
const NOW = Date.parse('2026-11-26T15:00:00.000Z');
const session: CheckoutSessionView = {
  id: 'checkout_0193a4f2-7c1e-7b4a-9d2e-5f6a7b8c9d0e',
  status: 'ready_for_complete',
  line_items: [
    {
      product_id: 'product_12',
      title: 'Boxed LED desk lamps',
      seller_id: 7,
      quantity: 10,
      unit_price: 2_450,
      line_total: 24_500,
      freight: 15_000,
    },
    {
      product_id: 'product_13',
      title: 'Cables',
      seller_id: 7,
      quantity: 2,
      unit_price: 100,
      line_total: 200,
      freight: 0,
      quote_request_id: 9,
    },
  ],
  totals: { subtotal: 24_700, freight: 15_000, total: 39_700 },
  currency: 'USD',
  messages: [],
  payment_terms: 'net_30',
  shipping_country: 'US',
  expires_at: '2026-11-26T15:30:00.000Z',
  order_ids: [],
};
const amounts = (totals: readonly { type: string; amount: number }[]) =>
  Object.fromEntries(totals.map(({ type, amount }) => [type, amount]));

describe('ACP checkout: requests to the order service', () => {
  it('maps items, buyer, country and the quote line', () => {
    const request = acpCreateSchema.parse({
      line_items: [{ id: 'product_12', quantity: 10 }, { id: 'product_13' }, { id: 'product_14' }],
      currency: 'USD',
      capabilities: { extensions: ['discount'] },
      buyer: {
        email: 'dana@example.com',
        first_name: 'Dana',
        last_name: 'Ortiz',
        company: { name: 'Ridgeway' },
      },
      fulfillment_details: { address: { country: 'DE', line_one: 'ignored' } },
      quote_id: 'quote_9',
      unknown_member: true,
    });
    expect(
      checkoutBodyOfAcp(request, { quoteRequestId: 9, productId: 'product_13', quantity: 40 }, undefined),
    ).toEqual({
      line_items: [
        { product_id: 'product_12', quantity: 10 },
        { product_id: 'product_13', quantity: 40, quote_request_id: 9 },
        { product_id: 'product_14', quantity: 1 },
      ],
      buyer: { email: 'dana@example.com', name: 'Dana Ortiz', company: 'Ridgeway' },
      shipping_country: 'DE',
    });
  });

  it("takes the account's contact without buyer, and refuses a quote no line names, naming quote_id", () => {
    const request = acpCreateSchema.parse({
      line_items: [{ id: 'product_12', quantity: 3 }],
      currency: 'usd',
    });
    expect(checkoutBodyOfAcp(request, undefined, { email: 'acct@example.com', name: 'Acct' })).toEqual({
      line_items: [{ product_id: 'product_12', quantity: 3 }],
      buyer: { email: 'acct@example.com', name: 'Acct' },
    });
    expect(() =>
      checkoutBodyOfAcp(request, { quoteRequestId: 9, productId: 'product_99', quantity: 1 }, undefined),
    ).toThrow(
      expect.objectContaining({
        kind: 'validation',
        violations: [expect.objectContaining({ path: 'quote_id' })],
      }),
    );
    expect(() =>
      checkoutChangesOfAcp(acpUpdateSchema.parse({}), {
        quoteRequestId: 9,
        productId: 'product_1',
        quantity: 1,
      }),
    ).toThrow(expect.objectContaining({ kind: 'validation' }));
    expect(
      checkoutChangesOfAcp(
        acpUpdateSchema.parse({ fulfillment_details: { address: { country: 'FR' } } }),
        undefined,
      ),
    ).toEqual({
      shipping_country: 'FR',
    });
  });

  it('names the field of bad input: ids, quantities, currency, NUL, huge numbers, payment terms', () => {
    const paths = (
      schema: {
        safeParse: (input: unknown) => { success: boolean; error?: { issues: { path: PropertyKey[] }[] } };
      },
      input: unknown,
    ) => [...new Set(schema.safeParse(input).error?.issues.map((issue) => issue.path.join('/')))];
    expect(paths(acpCreateSchema, { line_items: [{ id: 'product_1\u0000' }], currency: 'usd' })).toEqual([
      'line_items/0/id',
    ]);
    expect(
      paths(acpCreateSchema, { line_items: [{ id: 'product_1', quantity: 1e300 }], currency: 'usd' }),
    ).toEqual(['line_items/0/quantity']);
    expect(
      paths(acpCreateSchema, { line_items: [{ id: 'product_99999999999999999' }], currency: 'usd' }),
    ).toEqual(['line_items/0/id']);
    expect(paths(acpCreateSchema, { line_items: [{ id: 'product_1' }], currency: 'eur' })).toEqual([
      'currency',
    ]);
    expect(
      paths(acpCreateSchema, { line_items: [], currency: 'usd', quote_id: '99999999999999999' }),
    ).toEqual(['line_items', 'quote_id']);
    expect(paths(acpCreateSchema, 'not an object')).toEqual(['']);
    expect(paths(acpCompleteSchema, { payment_data: { payment_terms: 'net_60' } })).toEqual([
      'payment_data/payment_terms',
    ]);
    expect(paths(acpCompleteSchema, {})).toEqual(['payment_data']);
    expect(acpCompleteSchema.safeParse({ payment_data: { handler_id: 'invoice_net_30' } }).success).toBe(
      true,
    );
  });
});

describe('ACP checkout: the session of an order-service session', () => {
  it('answers ready_for_payment with goods, discount, subtotal, freight, tax and total lines', () => {
    const view = acpCheckoutView(BASE, session, [], NOW);
    expect(view).toMatchObject({
      id: session.id,
      status: 'ready_for_payment',
      currency: 'usd',
      protocol: { version: '2026-04-17' },
      quote_id: '9',
      // The session keeps only the country, and ACP's fulfillment_details.address is a whole address
      // (docs/protocols.md §4): the country is in metadata.
      metadata: { shipping_country: 'US' },
      selected_fulfillment_options: [
        { type: 'shipping', option_id: 'freight', item_ids: ['line_1', 'line_2'] },
      ],
      messages: [],
    });
    expect(view).not.toHaveProperty('fulfillment_details');
    expect(view.totals.map(({ type }) => type)).toEqual([
      'items_base_amount',
      'discount',
      'subtotal',
      'fulfillment',
      'tax',
      'total',
    ]);
    expect(amounts(view.totals)).toEqual({
      items_base_amount: 24_700,
      discount: 0,
      subtotal: 24_700,
      fulfillment: 15_000,
      tax: 0,
      total: 39_700,
    });
    expect(amounts(view.line_items[0]!.totals)).toMatchObject({
      items_base_amount: 24_500,
      fulfillment: 15_000,
      total: 39_500,
    });
    expect(view.capabilities.payment.handlers).toEqual([
      expect.objectContaining({ id: 'invoice_net_30', config: { payment_terms: 'net_30' } }),
    ]);
    expect(view).not.toHaveProperty('order');
  });

  it('escalates with a quantity_exceeded message and a continue_url to the product page', () => {
    const view = acpCheckoutView(
      BASE,
      {
        ...session,
        status: 'requires_escalation',
        messages: ['product_13: over the bulk threshold; use request_quote'],
      },
      [],
      NOW,
    );
    expect(view.status).toBe('requires_escalation');
    expect(view.continue_url).toBe(`${BASE}/agents/products/product_13.md`);
    expect(view.messages).toEqual([
      {
        type: 'error',
        code: 'quantity_exceeded',
        param: '$.line_items[1].quantity',
        content_type: 'plain',
        content: 'product_13: over the bulk threshold; use request_quote',
        resolution: 'requires_buyer_input',
      },
    ]);
  });

  it('says expired past expires_at, and carries the order once completed', () => {
    const expired = acpCheckoutView(
      BASE,
      { ...session, status: 'requires_escalation', messages: ['product_12: use request_quote'] },
      [],
      Date.parse('2026-11-26T16:00:00.000Z'),
    );
    expect(expired).toMatchObject({
      status: 'expired',
      messages: [{ code: 'expired', resolution: 'recoverable' }],
    });
    expect(expired).not.toHaveProperty('continue_url');
    const orders = [{ order_id: 41 }, { order_id: 42 }] as OrderView[];
    const completed = acpCheckoutView(
      BASE,
      { ...session, status: 'completed', order_ids: [41, 42] },
      orders,
      NOW,
    );
    expect(completed).toMatchObject({
      status: 'completed',
      order: { id: '41', checkout_session_id: session.id, permalink_url: `${BASE}/api/orders/41` },
      metadata: { shipping_country: 'US', order_ids: [41, 42] },
    });
    expect(acpCheckoutView(BASE, { ...session, status: 'canceled' }, [], NOW).status).toBe('canceled');
    expect(acpCheckoutView(BASE, { ...session, status: 'completing' }, [], NOW).status).toBe(
      'complete_in_progress',
    );
  });
});

describe('ACP checkout: errors', () => {
  const problems = new Problems(BASE);
  it('turns problems into ACP Error objects naming the field as JSONPath', () => {
    const invalid = problems.fromError(
      validationError('invalid checkout', [
        { path: 'line_items/1/product_id', message: 'no product product_99' },
        { path: 'shipping_country', message: 'must be an ISO code' },
      ]),
    )!;
    expect(acpErrorOfProblem(invalid)).toEqual({
      status: 400,
      body: {
        type: 'invalid_request',
        code: 'invalid',
        message:
          '$.line_items[1].id no product product_99; $.fulfillment_details.address.country must be an ISO code',
        param: '$.line_items[1].id',
      },
    });
    expect(acpErrorOfProblem(problems.fromError(conflict('expired'))!).body).toEqual({
      type: 'invalid_request',
      code: 'conflict',
      message: 'expired',
    });
    expect(acpErrorOfProblem(problems.of('idempotency-conflict', 'used')).body.code).toBe(
      'idempotency_conflict',
    );
    expect(acpErrorOfProblem(problems.of('service-unavailable')).body.type).toBe('service_unavailable');
  });

  it('maps paths of the order service and of the request alike', () => {
    expect(acpParamOf('line_items/0/quote_request_id')).toBe('$.quote_id');
    expect(acpParamOf('payment_data/payment_terms')).toBe('$.payment_data.payment_terms');
    expect(acpParamOf('(root)')).toBeUndefined();
    expect(acpParamOf('Idempotency-Key')).toBeUndefined();
  });
});
