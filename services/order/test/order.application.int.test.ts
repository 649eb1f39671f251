import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '@marketplace/database/testing';
import type { MailMessage } from '@marketplace/mailer';
import { startOutgoingMailWorker } from '@marketplace/outgoing-mail';
import type { AppError } from '@marketplace/platform';
import { createLogger, ManualClock, unavailable } from '@marketplace/platform';
import { orderV1 } from '@marketplace/proto';
import { createGrpcClient, startGrpcServer } from '@marketplace/rpc';
import { orderMigrations } from '../src/adapters/order.migrations.js';
import {
  completeCheckout,
  createCheckout,
  getCheckout,
  quickBuy,
  recoverInterruptedCompletions,
} from '../src/application/checkout.js';
import type { OrderDependencies } from '../src/application/order.dependencies.js';
import {
  completeInspectedOrders,
  confirmOrder,
  getBuyerOrder,
  markDelivered,
  markShipped,
  openDispute,
  queueDisputeMails,
  sellerAttention,
} from '../src/application/orders.js';
import { orderSettingsSchema } from '../src/order.config.js';
import { orderDependencies } from '../src/order.service.js';
import { orderGrpcService } from '../src/transport/order.grpc.js';
import { kindOf } from './support/errors.js';
import { InMemoryListings, InMemoryQuotes } from './support/in-memory-ports.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const HOUR = 3_600_000;
const BUYER = 41;
const OTHER_BUYER = 42;
const SELLER = 7;
const OTHER_SELLER = 8;
const buyerCall = (id = BUYER) => ({ actor: { kind: 'buyer' as const, id: String(id) } });
const sellerCall = (id = SELLER) => ({ actor: { kind: 'seller' as const, id: String(id) } });

describe.each(testEngines())('order application on $name', ({ create }) => {
  const schema = freshSchemaName('order_test');
  let db: Database;
  let deps: OrderDependencies;
  let listings: InMemoryListings;
  let quotes: InMemoryQuotes;
  const clock = new ManualClock(NOW);
  let nextProduct = 1;
  const newProduct = (
    overrides: Parameters<InMemoryListings['add']>[0] extends infer P ? Partial<P> : never = {},
  ) => listings.add({ productId: `product_${nextProduct++}`, ...overrides });

  beforeAll(async () => {
    db = await create();
    await migrate(db, schema, orderMigrations);
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  beforeEach(() => {
    clock.set(NOW);
    listings = new InMemoryListings();
    quotes = new InMemoryQuotes();
    deps = orderDependencies({
      db,
      clock,
      logger: createLogger({ service: 'order-test', level: 'silent' }),
      schema,
      ports: { listings, quotes },
      settings: orderSettingsSchema.parse({}),
      onDisputeRecorded: () => undefined,
    });
  });

  const placeOrder = async (quantity = 2, productId = newProduct().productId) => {
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId, quantity }],
      buyer: { email: 'buyer@example.com', company: 'Resale Co' },
      buyerAccountId: BUYER,
    });
    const { orders } = await completeCheckout(deps, {
      ...buyerCall(),
      checkoutId: session.checkoutId,
      buyerAccountId: BUYER,
    });
    const order = orders[0];
    if (!order) throw new Error('no order placed');
    return order;
  };

  it('prices a session, places one order per line with the deadlines, and reserves the stock once', async () => {
    const a = newProduct({ priceCents: 1_250, quantity: 10 });
    const b = newProduct({ priceCents: 300, quantity: 5, sellerAccountId: OTHER_SELLER });
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [
        { productId: a.productId, quantity: 4 },
        { productId: b.productId, quantity: 5 },
      ],
      buyer: { email: 'buyer@example.com' },
      buyerAccountId: BUYER,
      shippingCountry: 'DE',
    });
    expect(session).toMatchObject({
      status: 'ready_for_complete',
      subtotalCents: 4 * 1_250 + 5 * 300,
      messages: [],
    });
    expect(session.expiresAt).toBe(NOW + 30 * 60_000);

    const first = await completeCheckout(deps, {
      ...buyerCall(),
      checkoutId: session.checkoutId,
      buyerAccountId: BUYER,
    });
    const again = await completeCheckout(deps, {
      ...buyerCall(),
      checkoutId: session.checkoutId,
      buyerAccountId: BUYER,
    });
    expect(first.orders).toHaveLength(2);
    expect(again.orders.map((o) => o.orderId)).toEqual(first.orders.map((o) => o.orderId));
    expect(first.orders[0]).toMatchObject({
      status: 'awaiting_shipment',
      quantity: 4,
      totalCents: 5_000,
      sellerAccountId: SELLER,
      buyerAccountId: BUYER,
      shippingCountry: 'DE',
      paymentTerms: 'net_30',
      shipBy: NOW + 72 * HOUR,
    });
    expect(listings.stockOf(a.productId)).toBe(6);
    expect(listings.stockOf(b.productId)).toBe(0);
    const placed = await db.query(
      `select count(*)::int as n from ${schema}.events where type = 'OrderPlaced'`,
    );
    expect(placed.rows[0]).toEqual({ n: 2 });
  });

  it('records freight apart from goods, and places orders whose total includes it', async () => {
    const flat = newProduct({ priceCents: 1_000, freight: { mode: 'flat_per_order', cents: 15_000 } });
    const perUnit = newProduct({ priceCents: 500, freight: { mode: 'per_unit', cents: 250 } });
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [
        { productId: flat.productId, quantity: 6 },
        { productId: perUnit.productId, quantity: 4 },
        { productId: flat.productId, quantity: 4 },
      ],
      buyer: { email: 'buyer@example.com' },
      buyerAccountId: BUYER,
    });
    expect(session).toMatchObject({
      status: 'ready_for_complete',
      subtotalCents: 12_000,
      freightCents: 16_000,
      lines: [{ freightCents: 15_000 }, { freightCents: 1_000 }, { freightCents: 0 }],
    });
    const { orders } = await completeCheckout(deps, {
      ...buyerCall(),
      checkoutId: session.checkoutId,
      buyerAccountId: BUYER,
    });
    expect(orders.map(({ totalCents, freightCents }) => ({ totalCents, freightCents }))).toEqual([
      { totalCents: 21_000, freightCents: 15_000 },
      { totalCents: 3_000, freightCents: 1_000 },
      { totalCents: 4_000, freightCents: 0 },
    ]);
    const read = await getBuyerOrder(deps, orders[0]!.orderId, BUYER);
    expect(read).toMatchObject({ totalCents: 21_000, freightCents: 15_000 });
  });

  it('escalates a lot whose freight is quoted on request, and quick_buy refuses it', async () => {
    const quoted = newProduct({ freight: { mode: 'quoted_on_request' } });
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId: quoted.productId, quantity: 2 }],
      buyer: { email: 'buyer@example.com' },
      buyerAccountId: BUYER,
    });
    expect(session.status).toBe('requires_escalation');
    expect(session.messages.join(' ')).toMatch(/freight.*request_quote.*destination/);
    await expect(
      quickBuy(deps, {
        ...buyerCall(),
        productId: quoted.productId,
        quantity: 2,
        buyer: { email: 'buyer@example.com' },
        buyerAccountId: BUYER,
      }),
    ).rejects.toMatchObject({ kind: 'conflict', message: expect.stringMatching(/freight/) });
    expect(listings.stockOf(quoted.productId)).toBe(50);
  });

  it('lets concurrent completions of one session place its orders once, each answering them', async () => {
    const product = newProduct({ quantity: 20 });
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId: product.productId, quantity: 3 }],
      buyerAccountId: BUYER,
    });
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        completeCheckout(deps, { ...buyerCall(), checkoutId: session.checkoutId, buyerAccountId: BUYER }),
      ),
    );
    expect(new Set(answers.map(({ orders }) => orders[0]?.orderId)).size).toBe(1);
    expect(answers.every(({ session: completed }) => completed.status === 'completed')).toBe(true);
    expect(listings.stockOf(product.productId)).toBe(17);
  });

  it('escalates lines over the bulk threshold or above stock to a quote, and refuses to complete them', async () => {
    const product = newProduct({ priceCents: 100, quantity: 1_000 });
    const overUnits = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId: product.productId, quantity: 101 }],
    });
    expect(overUnits.status).toBe('requires_escalation');
    expect(overUnits.messages.join(' ')).toMatch(/bulk threshold.*request_quote/);
    const pricey = newProduct({ priceCents: 60_000, quantity: 100 });
    const overAmount = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId: pricey.productId, quantity: 9 }],
    });
    expect(overAmount.status).toBe('requires_escalation');
    const scarce = newProduct({ quantity: 3 });
    const overStock = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId: scarce.productId, quantity: 4 }],
    });
    expect(overStock.messages.join(' ')).toMatch(/only 3 units are in stock.*request_quote/);
    expect(
      await kindOf(
        completeCheckout(deps, { ...buyerCall(), checkoutId: overStock.checkoutId, buyerAccountId: BUYER }),
      ),
    ).toBe('conflict');
    expect(listings.stockOf(scarce.productId)).toBe(3);
  });

  it('refuses unknown products, quantities below the minimum order and malformed input, naming the fields', async () => {
    const moq = newProduct({ minOrderQuantity: 10 });
    await expect(
      createCheckout(deps, {
        ...buyerCall(),
        lines: [
          { productId: 'product_999999', quantity: 1 },
          { productId: moq.productId, quantity: 2 },
          { productId: 'nope', quantity: 0 },
        ],
        shippingCountry: 'germany',
      }),
    ).rejects.toMatchObject({
      kind: 'validation',
      violations: expect.arrayContaining([
        { path: 'line_items/2/product_id', message: 'must look like product_<number>' },
        expect.objectContaining({ path: 'line_items/2/quantity' }),
        expect.objectContaining({ path: 'shipping_country' }),
      ]),
    });
    // Two letters that name no country, and an address zod's rule refuses, as the gateway's schemas do.
    await expect(
      createCheckout(deps, {
        ...buyerCall(),
        lines: [{ productId: moq.productId, quantity: 10 }],
        shippingCountry: 'XX',
        buyer: { email: 'buyer@@example.com' },
      }),
    ).rejects.toMatchObject({
      kind: 'validation',
      violations: [
        { path: 'buyer/email', message: 'must be an email address' },
        { path: 'shipping_country', message: 'must be an ISO 3166-1 alpha-2 code' },
      ],
    });
    await expect(
      createCheckout(deps, {
        ...buyerCall(),
        lines: [
          { productId: 'product_999999', quantity: 1 },
          { productId: moq.productId, quantity: 2 },
        ],
      }),
    ).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'line_items/0/product_id', message: 'no product product_999999' }],
    });
    await expect(
      createCheckout(deps, { ...buyerCall(), lines: [{ productId: moq.productId, quantity: 2 }] }),
    ).rejects.toMatchObject({
      kind: 'validation',
      violations: [
        {
          path: 'line_items/0/quantity',
          message: "must be at least the listing's minimum order quantity of 10",
        },
      ],
    });
  });

  it('expires sessions, and a session bound to one buyer is not found by another', async () => {
    const product = newProduct();
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId: product.productId, quantity: 1 }],
      buyerAccountId: BUYER,
    });
    expect(
      await kindOf(
        completeCheckout(deps, {
          ...buyerCall(OTHER_BUYER),
          checkoutId: session.checkoutId,
          buyerAccountId: OTHER_BUYER,
        }),
      ),
    ).toBe('not_found');
    clock.advance(30 * 60_000 + 1);
    await expect(
      completeCheckout(deps, { ...buyerCall(), checkoutId: session.checkoutId, buyerAccountId: BUYER }),
    ).rejects.toMatchObject({ kind: 'conflict', message: expect.stringMatching(/expired/) });
    expect(listings.stockOf(product.productId)).toBe(50);
  });

  it('reads a session only for the buyer it is bound to, with its orders once completed', async () => {
    const product = newProduct();
    const line = { productId: product.productId, quantity: 1 };
    const bound = await createCheckout(deps, { ...buyerCall(), lines: [line], buyerAccountId: BUYER });
    expect(await getCheckout(deps, bound.checkoutId, BUYER)).toEqual({ session: bound, orders: [] });
    // Another buyer, an unknown id and a session priced anonymously all read as not found.
    expect(await kindOf(getCheckout(deps, bound.checkoutId, OTHER_BUYER))).toBe('not_found');
    expect(await kindOf(getCheckout(deps, 'checkout_00000000-0000-4000-8000-000000000000', BUYER))).toBe(
      'not_found',
    );
    const anonymous = await createCheckout(deps, { ...buyerCall(), lines: [line] });
    expect(await kindOf(getCheckout(deps, anonymous.checkoutId, BUYER))).toBe('not_found');
    // An order's stream id is not a session id: refused by name, never folded as a session.
    await expect(getCheckout(deps, 'order_1', BUYER)).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'checkout_id', message: 'must be a checkout session id' }],
    });

    const { orders } = await completeCheckout(deps, {
      ...buyerCall(),
      checkoutId: bound.checkoutId,
      buyerAccountId: BUYER,
    });
    const read = await getCheckout(deps, bound.checkoutId, BUYER);
    expect(read.session.status).toBe('completed');
    expect(read.orders).toEqual(orders);
    // Completed by a buyer, the anonymous session is bound to that buyer and readable by it alone.
    await completeCheckout(deps, { ...buyerCall(), checkoutId: anonymous.checkoutId, buyerAccountId: BUYER });
    expect((await getCheckout(deps, anonymous.checkoutId, BUYER)).session.status).toBe('completed');
    expect(await kindOf(getCheckout(deps, anonymous.checkoutId, OTHER_BUYER))).toBe('not_found');
  });

  it('releases the lines already reserved when a later line has run out, and the session can be retried', async () => {
    const plenty = newProduct({ quantity: 10 });
    const scarce = newProduct({ quantity: 2 });
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [
        { productId: plenty.productId, quantity: 4 },
        { productId: scarce.productId, quantity: 2 },
      ],
      buyerAccountId: BUYER,
    });
    // Another buyer takes the scarce units between pricing and completion.
    await listings.reserve(scarce.productId, 1, 'someone-else');
    await expect(
      completeCheckout(deps, { ...buyerCall(), checkoutId: session.checkoutId, buyerAccountId: BUYER }),
    ).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/not enough stock.*request_quote/),
    });
    expect(listings.stockOf(plenty.productId)).toBe(10);
    await listings.release(scarce.productId, 'someone-else');
    const { orders } = await completeCheckout(deps, {
      ...buyerCall(),
      checkoutId: session.checkoutId,
      buyerAccountId: BUYER,
    });
    expect(orders.map((o) => o.reservationId)).toEqual([
      `${session.checkoutId}:2:0`,
      `${session.checkoutId}:2:1`,
    ]);
    expect(listings.stockOf(plenty.productId)).toBe(6);
    expect(listings.stockOf(scarce.productId)).toBe(0);
  });

  it('rolls an interrupted completion forward without reserving twice', async () => {
    const a = newProduct({ quantity: 10 });
    const b = newProduct({ quantity: 10 });
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [
        { productId: a.productId, quantity: 3 },
        { productId: b.productId, quantity: 3 },
      ],
      buyerAccountId: BUYER,
    });
    listings.unavailableFor.add(`${session.checkoutId}:1:1`);
    expect(
      await kindOf(
        completeCheckout(deps, { ...buyerCall(), checkoutId: session.checkoutId, buyerAccountId: BUYER }),
      ),
    ).toBe('unavailable');
    expect(listings.stockOf(a.productId)).toBe(7);
    listings.unavailableFor.clear();
    expect(await recoverInterruptedCompletions(deps, 60_000)).toBe(0); // not stale yet
    clock.advance(61_000);
    expect(await recoverInterruptedCompletions(deps, 60_000)).toBe(1);
    expect(await recoverInterruptedCompletions(deps, 60_000)).toBe(0);
    expect(listings.stockOf(a.productId)).toBe(7);
    expect(listings.stockOf(b.productId)).toBe(7);
    const { orders } = await completeCheckout(deps, {
      ...buyerCall(),
      checkoutId: session.checkoutId,
      buyerAccountId: BUYER,
    });
    expect(orders).toHaveLength(2);
  });

  it('checks out an accepted quote of the buyer at its agreed price, over the bulk threshold', async () => {
    const product = newProduct({ priceCents: 1_000, quantity: 500 });
    quotes.quotes.set(5, {
      quoteRequestId: 5,
      productId: product.productId,
      quantity: 300,
      agreedUnitPriceCents: 700,
      buyerAccountId: BUYER,
    });
    quotes.quotes.set(6, { ...quotes.quotes.get(5)!, quoteRequestId: 6, agreedUnitPriceCents: undefined });
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId: product.productId, quantity: 300, quoteRequestId: 5 }],
      buyerAccountId: BUYER,
    });
    expect(session).toMatchObject({ status: 'ready_for_complete', subtotalCents: 210_000 });
    const violationOf = (input: Parameters<typeof createCheckout>[1]) =>
      createCheckout(deps, input).then(
        () => undefined,
        (error: AppError) => error.violations[0]?.message,
      );
    expect(
      await violationOf({
        ...buyerCall(OTHER_BUYER),
        lines: [{ productId: product.productId, quantity: 300, quoteRequestId: 5 }],
        buyerAccountId: OTHER_BUYER,
      }),
    ).toBe('no such quote request of this buyer');
    expect(
      await violationOf({
        ...buyerCall(),
        lines: [{ productId: product.productId, quantity: 300, quoteRequestId: 6 }],
        buyerAccountId: BUYER,
      }),
    ).toMatch(/no agreed price/);
  });

  it('charges a quoted line the freight its quote recorded, not the terms the seller set since', async () => {
    const product = newProduct({ quantity: 500, freight: { mode: 'flat_per_order', cents: 20_000 } });
    quotes.quotes.set(15, {
      quoteRequestId: 15,
      productId: product.productId,
      quantity: 300,
      agreedUnitPriceCents: 700,
      buyerAccountId: BUYER,
      freight: { mode: 'flat_per_order', cents: 15_000 },
    });
    const session = await createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId: product.productId, quantity: 300, quoteRequestId: 15 }],
      buyerAccountId: BUYER,
    });
    expect(session).toMatchObject({ subtotalCents: 210_000, freightCents: 15_000 });
  });

  describe('an agreed quote is used once', () => {
    let nextQuote = 100;
    const agreedQuote = (
      productId: string,
      overrides: { quantity?: number; buyerAccountId?: number; offerExpiresAt?: number } = {},
    ) => {
      const quoteRequestId = nextQuote++;
      quotes.quotes.set(quoteRequestId, {
        quoteRequestId,
        productId,
        quantity: overrides.quantity ?? 300,
        agreedUnitPriceCents: 700,
        offerExpiresAt: overrides.offerExpiresAt,
        buyerAccountId: 'buyerAccountId' in overrides ? overrides.buyerAccountId : BUYER,
      });
      return quoteRequestId;
    };
    const checkout = (productId: string, quoteRequestId: number, quantity = 300, buyer = BUYER) =>
      createCheckout(deps, {
        ...buyerCall(buyer),
        lines: [{ productId, quantity, quoteRequestId }],
        buyerAccountId: buyer,
      });
    const complete = (checkoutId: string, buyer = BUYER) =>
      completeCheckout(deps, { ...buyerCall(buyer), checkoutId, buyerAccountId: buyer });
    const redemptionsOf = async (quoteRequestId: number) =>
      (
        await db.query<{ checkout_id: string; order_id: string | null }>(
          `select checkout_id, order_id from ${schema}.quote_redemptions where quote_request_id = $1`,
          [quoteRequestId],
        )
      ).rows;

    it('records the redemption with the order; a later checkout of that quote is a 409', async () => {
      const product = newProduct({ priceCents: 1_000, quantity: 1_000 });
      const quoteRequestId = agreedQuote(product.productId);
      const first = await checkout(product.productId, quoteRequestId, 200);
      const { orders } = await complete(first.checkoutId);
      expect(orders[0]).toMatchObject({ quantity: 200, unitPriceCents: 700, quoteRequestId });
      expect(await redemptionsOf(quoteRequestId)).toEqual([
        { checkout_id: first.checkoutId, order_id: String(orders[0]?.orderId) },
      ]);
      // The 100 units left of the quote are not for sale at its price either: the quote was used.
      await expect(checkout(product.productId, quoteRequestId, 100)).rejects.toMatchObject({
        kind: 'conflict',
        message: expect.stringMatching(`already used by order ${orders[0]?.orderId}`),
      });
      expect(listings.stockOf(product.productId)).toBe(800);
    });

    it('refuses one quote on two lines of one checkout, naming the second line', async () => {
      const product = newProduct({ quantity: 1_000 });
      const quoteRequestId = agreedQuote(product.productId);
      await expect(
        createCheckout(deps, {
          ...buyerCall(),
          lines: [
            { productId: product.productId, quantity: 300, quoteRequestId },
            { productId: product.productId, quantity: 300, quoteRequestId },
          ],
          buyerAccountId: BUYER,
        }),
      ).rejects.toMatchObject({
        kind: 'validation',
        violations: [{ path: 'line_items/1/quote_request_id', message: expect.stringMatching(/used once/) }],
      });
    });

    it('lets one of two racing checkouts of a quote place its order; the other is a 409 and holds no stock', async () => {
      const product = newProduct({ quantity: 1_000 });
      const quoteRequestId = agreedQuote(product.productId);
      const sessions = [
        await checkout(product.productId, quoteRequestId),
        await checkout(product.productId, quoteRequestId),
      ];
      const outcomes = await Promise.allSettled(sessions.map((session) => complete(session.checkoutId)));
      const placed = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const refused = outcomes.flatMap((outcome): unknown[] =>
        outcome.status === 'rejected' ? [outcome.reason] : [],
      );
      expect(placed).toHaveLength(1);
      expect(refused).toEqual([expect.objectContaining({ kind: 'conflict' })]);
      expect(listings.stockOf(product.productId)).toBe(700);
      const orderEvents = await db.query(
        `select count(*)::int as n from ${schema}.events where type = 'OrderPlaced' and data->'order'->>'quoteRequestId' = $1`,
        [String(quoteRequestId)],
      );
      expect(orderEvents.rows[0]).toEqual({ n: 1 });
    });

    it('gives the quote back when the attempt fails for stock, so a later checkout can use it', async () => {
      const product = newProduct({ quantity: 1_000 });
      const quoteRequestId = agreedQuote(product.productId);
      const session = await checkout(product.productId, quoteRequestId);
      listings.add({ ...product, quantity: 10 });
      await expect(complete(session.checkoutId)).rejects.toMatchObject({ kind: 'conflict' });
      expect(await redemptionsOf(quoteRequestId)).toEqual([]);
      listings.add({ ...product, quantity: 1_000 });
      const retry = await checkout(product.productId, quoteRequestId);
      const { orders } = await complete(retry.checkoutId);
      expect(orders).toHaveLength(1);
    });

    it("is another account's or an unclaimed anonymous quote only for its owner, whatever email the body names", async () => {
      const product = newProduct({ quantity: 1_000 });
      const anonymous = agreedQuote(product.productId, { buyerAccountId: undefined });
      await expect(
        createCheckout(deps, {
          ...buyerCall(),
          lines: [{ productId: product.productId, quantity: 300, quoteRequestId: anonymous }],
          buyer: { email: 'buyer@example.com' },
          buyerAccountId: BUYER,
        }),
      ).rejects.toMatchObject({
        violations: [
          { path: 'line_items/0/quote_request_id', message: 'no such quote request of this buyer' },
        ],
      });
      const theirs = agreedQuote(product.productId, { buyerAccountId: OTHER_BUYER });
      await expect(checkout(product.productId, theirs)).rejects.toMatchObject({ kind: 'validation' });
      await expect(checkout(product.productId, theirs, 300, OTHER_BUYER)).resolves.toMatchObject({
        status: 'ready_for_complete',
      });
    });

    it('pays a quote at once with quick_buy, even without instant checkout; the quote then is used', async () => {
      const product = newProduct({ quantity: 1_000, instantCheckout: false });
      const quoteRequestId = agreedQuote(product.productId);
      const pay = () =>
        quickBuy(deps, {
          ...buyerCall(),
          productId: product.productId,
          quantity: 300,
          quoteRequestId,
          buyer: { email: 'buyer@example.com' },
          buyerAccountId: BUYER,
        });
      const { order } = await pay();
      expect(order).toMatchObject({
        quantity: 300,
        unitPriceCents: 700,
        totalCents: 210_000,
        quoteRequestId,
      });
      await expect(pay()).rejects.toMatchObject({
        kind: 'conflict',
        message: expect.stringMatching(/already used/),
      });
      await expect(
        quickBuy(deps, {
          ...buyerCall(),
          productId: product.productId,
          quantity: 1,
          buyer: { email: 'buyer@example.com' },
          buyerAccountId: BUYER,
        }),
      ).rejects.toMatchObject({ kind: 'conflict', message: expect.stringMatching(/instant checkout/) });
    });

    it('refuses an offer that expired, and ends a session at its offer expiry', async () => {
      const product = newProduct({ quantity: 1_000 });
      const expired = agreedQuote(product.productId, { offerExpiresAt: NOW });
      await expect(checkout(product.productId, expired)).rejects.toMatchObject({
        violations: [{ path: 'line_items/0/quote_request_id', message: expect.stringMatching(/expired/) }],
      });
      const soon = agreedQuote(product.productId, { offerExpiresAt: NOW + 60_000 });
      const session = await checkout(product.productId, soon);
      expect(session.expiresAt).toBe(NOW + 60_000);
      clock.advance(60_001);
      await expect(complete(session.checkoutId)).rejects.toMatchObject({
        kind: 'conflict',
        message: expect.stringMatching(/expired/),
      });
      expect(listings.stockOf(product.productId)).toBe(1_000);
    });

    it('applies the bulk threshold per product: lines of one product add up, quoted lines apart', async () => {
      const product = newProduct({ priceCents: 100, quantity: 1_000 });
      const split = await createCheckout(deps, {
        ...buyerCall(),
        lines: [
          { productId: product.productId, quantity: 60 },
          { productId: product.productId, quantity: 60 },
        ],
        buyerAccountId: BUYER,
      });
      expect(split.status).toBe('requires_escalation');
      expect(split.messages).toEqual([
        expect.stringMatching(/^lines 1, 2 \(product_\d+\): 120 units .* bulk threshold/),
      ]);
      const quoteRequestId = agreedQuote(product.productId);
      const quotedPlusSmall = await createCheckout(deps, {
        ...buyerCall(),
        lines: [
          { productId: product.productId, quantity: 300, quoteRequestId },
          { productId: product.productId, quantity: 50 },
        ],
        buyerAccountId: BUYER,
      });
      expect(quotedPlusSmall).toMatchObject({
        status: 'ready_for_complete',
        subtotalCents: 300 * 700 + 50 * 100,
      });
    });
  });

  it('quick_buy places an instant order and refuses listings without instant checkout or over the threshold', async () => {
    const instant = newProduct({ quantity: 20 });
    const { order } = await quickBuy(deps, {
      ...buyerCall(),
      productId: instant.productId,
      quantity: 2,
      buyer: { email: 'buyer@example.com' },
      buyerAccountId: BUYER,
      shippingCountry: 'US',
    });
    expect(order).toMatchObject({ status: 'awaiting_shipment', quantity: 2, shippingCountry: 'US' });
    const manual = newProduct({ instantCheckout: false });
    await expect(
      quickBuy(deps, {
        ...buyerCall(),
        productId: manual.productId,
        quantity: 1,
        buyer: { email: 'b@example.com' },
        buyerAccountId: BUYER,
      }),
    ).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/instant checkout.*request_quote/),
    });
    await expect(
      quickBuy(deps, {
        ...buyerCall(),
        productId: instant.productId,
        quantity: 101,
        buyer: { email: 'b@example.com' },
        buyerAccountId: BUYER,
      }),
    ).rejects.toMatchObject({ kind: 'conflict', message: expect.stringMatching(/bulk threshold/) });
    expect(listings.stockOf(instant.productId)).toBe(18);
  });

  it('ships in bulk with per-order ownership, idempotently; delivers; the buyer confirms', async () => {
    const mine = await placeOrder();
    const mineToo = await placeOrder();
    const theirs = await placeOrder(1, newProduct({ sellerAccountId: OTHER_SELLER }).productId);
    const tracking = {
      trackingNumber: '1Z999',
      carrierName: 'UPS',
      trackingUrl: 'https://ups.example/1Z999',
    };
    const first = await markShipped(deps, {
      ...sellerCall(),
      sellerAccountId: SELLER,
      orderIds: [mine.orderId, theirs.orderId, 999_999, mine.orderId],
      tracking,
    });
    expect(first.updated.map((o) => o.orderId)).toEqual([mine.orderId]);
    expect(first.skipped).toEqual([
      expect.objectContaining({ orderId: theirs.orderId, reason: 'not_found' }),
      expect.objectContaining({ orderId: 999_999, reason: 'not_found' }),
    ]);
    const repeat = await markShipped(deps, {
      ...sellerCall(),
      sellerAccountId: SELLER,
      orderIds: [mine.orderId],
      tracking,
    });
    expect(repeat.updated.map((o) => o.orderId)).toEqual([mine.orderId]);
    const changed = await markShipped(deps, {
      ...sellerCall(),
      sellerAccountId: SELLER,
      orderIds: [mine.orderId],
      tracking: { trackingNumber: 'other' },
    });
    expect(changed.skipped[0]).toMatchObject({ reason: 'already_shipped' });
    await expect(
      markShipped(deps, {
        ...sellerCall(),
        sellerAccountId: SELLER,
        orderIds: [mineToo.orderId],
        tracking: { carrierName: 'x'.repeat(256) },
      }),
    ).rejects.toMatchObject({
      kind: 'validation',
      violations: [expect.objectContaining({ path: 'carrier_name' })],
    });
    const events = await db.query(
      `select count(*)::int as n from ${schema}.events where stream_id = $1 and type = 'OrderShipped'`,
      [`order_${mine.orderId}`],
    );
    expect(events.rows[0]).toEqual({ n: 1 });

    expect(
      await kindOf(
        markDelivered(deps, {
          ...sellerCall(OTHER_SELLER),
          orderId: mine.orderId,
          sellerAccountId: OTHER_SELLER,
        }),
      ),
    ).toBe('not_found');
    expect(
      await kindOf(
        markDelivered(deps, { ...sellerCall(), orderId: mineToo.orderId, sellerAccountId: SELLER }),
      ),
    ).toBe('conflict');
    clock.advance(HOUR);
    const delivered = await markDelivered(deps, {
      ...sellerCall(),
      orderId: mine.orderId,
      sellerAccountId: SELLER,
    });
    expect(delivered).toMatchObject({ status: 'delivered', inspectionDeadline: NOW + HOUR + 48 * HOUR });
    expect(
      await kindOf(
        confirmOrder(deps, { ...buyerCall(OTHER_BUYER), orderId: mine.orderId, buyerAccountId: OTHER_BUYER }),
      ),
    ).toBe('not_found');
    expect(await kindOf(getBuyerOrder(deps, mine.orderId, OTHER_BUYER))).toBe('not_found');
    const confirmed = await confirmOrder(deps, {
      ...buyerCall(),
      orderId: mine.orderId,
      buyerAccountId: BUYER,
    });
    expect(confirmed.status).toBe('completed');
  });

  it('records a dispute only on the owner’s delivered order and emails the operator from the queue', async () => {
    const order = await placeOrder();
    const dispute = {
      ...buyerCall(),
      orderId: order.orderId,
      buyerAccountId: BUYER,
      reason: 'missing_units' as const,
      description: 'Two pallets short =HYPERLINK("x")',
      requestedAction: 'partial_refund' as const,
      photoUrls: ['https://photos.example/1.jpg'],
    };
    expect(await kindOf(openDispute(deps, dispute))).toBe('conflict');
    await markShipped(deps, {
      ...sellerCall(),
      sellerAccountId: SELLER,
      orderIds: [order.orderId],
      tracking: {},
    });
    await markDelivered(deps, { ...sellerCall(), orderId: order.orderId, sellerAccountId: SELLER });
    expect(await kindOf(openDispute(deps, { ...dispute, buyerAccountId: OTHER_BUYER }))).toBe('not_found');
    const disputed = await openDispute(deps, dispute);
    expect(disputed).toMatchObject({ status: 'issue_reported', issue: { reason: 'missing_units' } });

    // Nothing is queued without ADMIN_EMAIL: the notice waits for it.
    expect(await deps.outgoingMail.unsentCount(db)).toBe(0);
    const withAdmin = orderDependencies({
      db,
      clock,
      logger: createLogger({ service: 'order-test', level: 'silent' }),
      schema,
      ports: { listings, quotes },
      settings: orderSettingsSchema.parse({ ADMIN_EMAIL: 'ops@marketplace.example' }),
      onDisputeRecorded: () => undefined,
    });
    expect(await db.transaction((tx) => queueDisputeMails(withAdmin, tx))).toBeGreaterThanOrEqual(1);
    expect(await db.transaction((tx) => queueDisputeMails(withAdmin, tx))).toBe(0);

    const sent: MailMessage[] = [];
    const mailer = {
      send: async (message: MailMessage) => {
        // The database handle refuses queries inside one of its transactions: the send runs outside any.
        await db.query('SELECT 1');
        sent.push(message);
      },
      close: async () => undefined,
    };
    const logger = createLogger({ service: 'order-test', level: 'silent' });
    const worker = startOutgoingMailWorker({
      db,
      table: withAdmin.outgoingMail,
      mailer,
      clock,
      logger,
      runLoop: false,
    });
    expect(await worker.processDue()).toBeGreaterThanOrEqual(1);
    expect(await worker.processDue()).toBe(0);
    const mail = sent.find((message) => message.subject.includes(`order ${order.orderId}`));
    expect(mail).toMatchObject({
      to: 'ops@marketplace.example',
      messageId: `<dispute-order-${order.orderId}@marketplace.invalid>`,
    });
    expect(mail?.text).toContain('Two pallets short');
    expect(mail?.text).toContain('https://photos.example/1.jpg');
    expect(mail?.text).toContain('"requestedAction":"partial_refund"');

    const attention = await sellerAttention(deps, { sellerAccountId: SELLER, windowHours: 24, limit: 5 });
    expect(attention.issues.orders.map((o) => o.orderId)).toContain(order.orderId);
    expect(await kindOf(sellerAttention(deps, { sellerAccountId: SELLER, windowHours: 169, limit: 5 }))).toBe(
      'validation',
    );
  });

  it('completes delivered orders once their inspection deadline passes, once, whoever runs the job', async () => {
    const order = await placeOrder();
    await markShipped(deps, {
      ...sellerCall(),
      sellerAccountId: SELLER,
      orderIds: [order.orderId],
      tracking: {},
    });
    await markDelivered(deps, { ...sellerCall(), orderId: order.orderId, sellerAccountId: SELLER });
    clock.advance(48 * HOUR - 1);
    await completeInspectedOrders(deps);
    expect((await getBuyerOrder(deps, order.orderId, BUYER)).status).toBe('delivered');
    clock.advance(1);
    // Two replicas at once.
    await Promise.all([completeInspectedOrders(deps), completeInspectedOrders(deps)]);
    expect((await getBuyerOrder(deps, order.orderId, BUYER)).status).toBe('completed');
    const completions = await db.query(
      `select count(*)::int as n from ${schema}.events where stream_id = $1 and type = 'OrderCompleted'`,
      [`order_${order.orderId}`],
    );
    expect(completions.rows[0]).toEqual({ n: 1 });
  });

  it('lists the seller’s orders near their ship-by deadline, soonest first', async () => {
    const early = await placeOrder();
    clock.advance(10 * HOUR);
    const later = await placeOrder();
    clock.advance(50 * HOUR); // early is due in 12 h, later in 22 h
    const within12 = await sellerAttention(deps, { sellerAccountId: SELLER, windowHours: 12, limit: 50 });
    const ids = within12.atRisk.orders.map((o) => o.orderId);
    expect(ids).toContain(early.orderId);
    expect(ids).not.toContain(later.orderId);
    const other = await sellerAttention(deps, { sellerAccountId: OTHER_SELLER, windowHours: 168, limit: 50 });
    expect(other.atRisk.orders.every((o) => o.sellerAccountId === OTHER_SELLER)).toBe(true);
  });

  describe('with an idempotency key', () => {
    const created = async (type: 'CheckoutCreated' | 'OrderPlaced'): Promise<number> => {
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from ${schema}.events where type = $1`,
        [type],
      );
      return rows[0]?.n ?? 0;
    };
    const keyedCheckout = (productId: string, key: string) => ({
      ...buyerCall(),
      lines: [{ productId, quantity: 2 }],
      buyer: { email: 'buyer@example.com' },
      buyerAccountId: BUYER,
      correlationId: 'req-1',
      idempotencyKey: key,
    });
    const keyedQuickBuy = (productId: string, key: string, quantity = 2) => ({
      ...buyerCall(),
      productId,
      quantity,
      buyer: { email: 'buyer@example.com' },
      buyerAccountId: BUYER,
      idempotencyKey: key,
    });

    it('answers a repeated checkout with the session it created, as it is now', async () => {
      const product = newProduct();
      const before = await created('CheckoutCreated');
      const first = await createCheckout(deps, keyedCheckout(product.productId, 'checkout-key-1'));
      const repeat = await createCheckout(deps, {
        ...keyedCheckout(product.productId, 'checkout-key-1'),
        correlationId: 'req-2',
      });
      expect(repeat).toEqual(first);
      await completeCheckout(deps, { ...buyerCall(), checkoutId: first.checkoutId, buyerAccountId: BUYER });
      const afterCompletion = await createCheckout(deps, keyedCheckout(product.productId, 'checkout-key-1'));
      expect(afterCompletion).toMatchObject({ checkoutId: first.checkoutId, status: 'completed' });
      expect(await created('CheckoutCreated')).toBe(before + 1);
    });

    it('refuses the key with another checkout, or with a quick_buy of the same line', async () => {
      const product = newProduct();
      await createCheckout(deps, keyedCheckout(product.productId, 'checkout-key-2'));
      const other = newProduct();
      expect(await kindOf(createCheckout(deps, keyedCheckout(other.productId, 'checkout-key-2')))).toBe(
        'idempotency_conflict',
      );
      expect(await kindOf(quickBuy(deps, keyedQuickBuy(product.productId, 'checkout-key-2')))).toBe(
        'idempotency_conflict',
      );
    });

    it('scopes anonymous sessions by buyer email, or shares one scope without an email', async () => {
      const product = newProduct();
      const anonymous = {
        actor: { kind: 'anonymous' as const, id: '' },
        lines: [{ productId: product.productId, quantity: 1 }],
      };
      const ada = await createCheckout(deps, {
        ...anonymous,
        buyer: { email: 'ada@example.com' },
        idempotencyKey: 'anon-1',
      });
      const bob = await createCheckout(deps, {
        ...anonymous,
        buyer: { email: 'bob@example.com' },
        idempotencyKey: 'anon-1',
      });
      expect(bob.checkoutId).not.toBe(ada.checkoutId);
      const nobody = await createCheckout(deps, { ...anonymous, idempotencyKey: 'anon-1' });
      const nobodyAgain = await createCheckout(deps, { ...anonymous, idempotencyKey: 'anon-1' });
      expect(nobodyAgain.checkoutId).toBe(nobody.checkoutId);
      expect([ada.checkoutId, bob.checkoutId]).not.toContain(nobody.checkoutId);
    });

    it('answers a repeated quick_buy with the order it placed, reserving the stock once', async () => {
      const product = newProduct({ quantity: 20 });
      const orders = await created('OrderPlaced');
      const first = await quickBuy(deps, keyedQuickBuy(product.productId, 'quick-key-1'));
      const repeat = await quickBuy(deps, keyedQuickBuy(product.productId, 'quick-key-1'));
      expect(repeat).toEqual(first);
      expect(listings.stockOf(product.productId)).toBe(18);
      expect(await created('OrderPlaced')).toBe(orders + 1);
    });

    it('places one order for concurrent quick_buys with one key', async () => {
      const product = newProduct({ quantity: 20 });
      const orders = await created('OrderPlaced');
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => quickBuy(deps, keyedQuickBuy(product.productId, 'quick-key-2'))),
      );
      expect(new Set(answers.map(({ order }) => order.orderId)).size).toBe(1);
      expect(listings.stockOf(product.productId)).toBe(18);
      expect(await created('OrderPlaced')).toBe(orders + 1);
    });

    it('finishes an interrupted quick_buy when it is retried with its key, placing one order', async () => {
      const product = newProduct({ quantity: 20 });
      const orders = await created('OrderPlaced');
      const reserve = listings.reserve.bind(listings);
      // The listing service is down for the first call's reservation: the caller sees a 503 and retries.
      listings.reserve = () => {
        listings.reserve = reserve;
        return Promise.reject(unavailable('listing service down'));
      };
      expect(await kindOf(quickBuy(deps, keyedQuickBuy(product.productId, 'quick-key-3')))).toBe(
        'unavailable',
      );
      const retried = await quickBuy(deps, keyedQuickBuy(product.productId, 'quick-key-3'));
      expect(retried.order).toMatchObject({ status: 'awaiting_shipment', quantity: 2 });
      expect(listings.stockOf(product.productId)).toBe(18);
      expect(await created('OrderPlaced')).toBe(orders + 1);
    });

    it('records nothing for a refused request, so the key serves the corrected one', async () => {
      const product = newProduct({ instantCheckout: false });
      const sessions = await created('CheckoutCreated');
      expect(await kindOf(quickBuy(deps, keyedQuickBuy(product.productId, 'quick-key-4', 0)))).toBe(
        'validation',
      );
      expect(await kindOf(quickBuy(deps, keyedQuickBuy(product.productId, 'quick-key-4')))).toBe('conflict');
      expect(await created('CheckoutCreated')).toBe(sessions);
      listings.add({ ...product, instantCheckout: true });
      const bought = await quickBuy(deps, keyedQuickBuy(product.productId, 'quick-key-4'));
      expect(bought.order.productId).toBe(product.productId);
    });

    it('refuses a malformed key as a violation of idempotency_key', async () => {
      const product = newProduct();
      await expect(createCheckout(deps, keyedCheckout(product.productId, ''))).rejects.toMatchObject({
        kind: 'validation',
        violations: [{ path: 'idempotency_key', message: 'must not be empty' }],
      });
    });
  });

  // docs/security.md, "Internal calls": a valid token for one account cannot act for another.
  it("refuses over gRPC every call whose body names another account than the token's, changing nothing", async () => {
    const mine = await placeOrder();
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [orderGrpcService(deps)],
      logger: createLogger({ service: 'order-test', level: 'silent' }),
      serviceName: 'order-test',
    });
    const { client, close } = createGrpcClient(orderV1.OrderServiceDefinition, server.address);
    try {
      // The client signs its token for the request's actor: OTHER_BUYER's (or OTHER_SELLER's) token, BUYER in the body.
      const asOtherBuyer = { actor: buyerCall(OTHER_BUYER).actor, buyerAccountId: BUYER, correlationId: '' };
      const asOtherSeller = {
        actor: sellerCall(OTHER_SELLER).actor,
        sellerAccountId: SELLER,
        correlationId: '',
      };
      const product = newProduct({ instantCheckout: true });
      const forged: [string, Promise<unknown>][] = [
        [
          'CreateCheckout',
          client.createCheckout({
            ...asOtherBuyer,
            lines: [{ productId: product.productId, quantity: 1 }],
            buyer: { email: 'buyer@example.com' },
          }),
        ],
        [
          'CreateCheckout, anonymous token',
          client.createCheckout({
            ...asOtherBuyer,
            actor: { kind: 'anonymous', id: '' },
            lines: [{ productId: product.productId, quantity: 1 }],
            buyer: { email: 'buyer@example.com' },
          }),
        ],
        ['CompleteCheckout', client.completeCheckout({ ...asOtherBuyer, checkoutId: 'chk_x' })],
        ['GetCheckout', client.getCheckout({ ...asOtherBuyer, checkoutId: 'chk_x' })],
        ['UpdateCheckout', client.updateCheckout({ ...asOtherBuyer, checkoutId: 'chk_x' })],
        ['CancelCheckout', client.cancelCheckout({ ...asOtherBuyer, checkoutId: 'chk_x' })],
        [
          'QuickBuy',
          client.quickBuy({
            ...asOtherBuyer,
            productId: product.productId,
            quantity: 1,
            buyer: { email: 'buyer@example.com' },
          }),
        ],
        ['GetBuyerOrder', client.getBuyerOrder({ ...asOtherBuyer, orderId: mine.orderId })],
        ['ConfirmOrder', client.confirmOrder({ ...asOtherBuyer, orderId: mine.orderId })],
        [
          'OpenDispute',
          client.openDispute({ ...asOtherBuyer, orderId: mine.orderId, reason: 'damaged', description: 'x' }),
        ],
        ['MarkShipped', client.markShipped({ ...asOtherSeller, orderIds: [mine.orderId] })],
        ['MarkDelivered', client.markDelivered({ ...asOtherSeller, orderId: mine.orderId })],
        ['GetSellerOrders', client.getSellerOrders({ ...asOtherSeller, orderIds: [mine.orderId] })],
        ['SellerAttention', client.sellerAttention({ ...asOtherSeller, windowHours: 24, limit: 10 })],
        // The dispute desk is the operator's: an account's token is refused.
        [
          'ListDisputes',
          client.listDisputes({ actor: buyerCall(BUYER).actor, status: 'all', limit: 10, cursor: '' }),
        ],
        [
          'ResolveDispute',
          client.resolveDispute({
            actor: sellerCall(SELLER).actor,
            orderId: mine.orderId,
            resolution: 'rejected',
            refundCents: 0,
            note: 'x',
            correlationId: '',
          }),
        ],
        ['ListBuyerOrders', client.listBuyerOrders({ ...asOtherBuyer, status: '', limit: 10, cursor: '' })],
        [
          'ListSellerOrders',
          client.listSellerOrders({ ...asOtherSeller, status: '', limit: 10, cursor: '' }),
        ],
        [
          'CancelOrder',
          client.cancelOrder({ ...asOtherBuyer, orderId: mine.orderId, sellerAccountId: 0, reason: '' }),
        ],
        // A buyer's token naming a seller account: the kind must match too.
        [
          'GetSellerOrders, buyer token',
          client.getSellerOrders({
            actor: { kind: 'buyer', id: String(SELLER) },
            sellerAccountId: SELLER,
            orderIds: [mine.orderId],
          }),
        ],
      ];
      for (const [method, call] of forged) {
        expect([method, await kindOf(call)]).toEqual([method, 'forbidden']);
      }
      expect(await getBuyerOrder(deps, mine.orderId, BUYER)).toEqual(mine);
      const placed = await db.query<{ n: number }>(
        `select count(*)::int as n from ${schema}.events where type = 'OrderPlaced' and data::text like $1`,
        [`%${product.productId}"%`],
      );
      expect(placed.rows[0]?.n).toBe(0);
      // The token's own account in the body is served.
      const { order } = await client.getBuyerOrder({
        actor: buyerCall().actor,
        buyerAccountId: BUYER,
        orderId: mine.orderId,
      });
      expect(order?.orderId).toBe(mine.orderId);
    } finally {
      close();
      await server.shutdown(1_000);
    }
  });
});
