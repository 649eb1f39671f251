import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '@marketplace/database/testing';
import { AppError, createLogger, ManualClock, unavailable } from '@marketplace/platform';
import { orderMigrations } from '../src/adapters/order.migrations.js';
import { completeCheckout, createCheckout } from '../src/application/checkout.js';
import type { OrderDependencies } from '../src/application/order.dependencies.js';
import {
  cancelOrder,
  listBuyerOrders,
  listDisputes,
  listSellerOrders,
  queueSellerNotice,
  releaseCancelledStock,
  resolveDispute,
} from '../src/application/order-lifecycle.js';
import { markDelivered, markShipped, openDispute, sellerAttention } from '../src/application/orders.js';
import { orderSettingsSchema } from '../src/order.config.js';
import { orderDependencies } from '../src/order.service.js';
import { kindOf } from './support/errors.js';
import { InMemoryListings, InMemoryQuotes } from './support/in-memory-ports.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const SEC = 1_000;
const BUYER = 41;
const OTHER_BUYER = 42;
const SELLER = 7;
const OTHER_SELLER = 8;
const buyerCall = (id = BUYER) => ({ actor: { kind: 'buyer' as const, id: String(id) } });
const sellerCall = (id = SELLER) => ({ actor: { kind: 'seller' as const, id: String(id) } });
const adminCall = { actor: { kind: 'admin' as const, id: 'operator' } };

const violationPaths = async (work: Promise<unknown>): Promise<string[]> => {
  try {
    await work;
  } catch (error) {
    if (error instanceof AppError && error.kind === 'validation') {
      return (error.violations ?? []).map((violation) => violation.path);
    }
    throw error;
  }
  throw new Error('expected a validation error');
};

describe.each(testEngines())('order lifecycle on $name', ({ create }) => {
  const schema = freshSchemaName('order_lifecycle');
  let db: Database;
  let deps: OrderDependencies;
  let listings: InMemoryListings;
  const clock = new ManualClock(NOW);
  let nextProduct = 1;

  beforeAll(async () => {
    db = await create();
    await migrate(db, schema, orderMigrations);
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  beforeEach(async () => {
    clock.set(NOW);
    listings = new InMemoryListings();
    deps = orderDependencies({
      db,
      clock,
      logger: createLogger({ service: 'order-test', level: 'silent' }),
      schema,
      ports: { listings, quotes: new InMemoryQuotes() },
      settings: orderSettingsSchema.parse({}),
      onDisputeRecorded: () => undefined,
    });
    await deps.sellerContacts.upsert(db, {
      accountId: SELLER,
      name: 'Surplus Ltd',
      email: 'seller@example.com',
    });
  });

  const placeOrder = async (
    options: { quantity?: number; buyer?: number; seller?: number; priceCents?: number } = {},
  ) => {
    const buyer = options.buyer ?? BUYER;
    const { productId } = listings.add({
      productId: `product_${nextProduct++}`,
      quantity: 10,
      sellerAccountId: options.seller ?? SELLER,
      priceCents: options.priceCents ?? 1_000,
    });
    const session = await createCheckout(deps, {
      ...buyerCall(buyer),
      lines: [{ productId, quantity: options.quantity ?? 2 }],
      buyer: { email: `buyer${buyer}@example.com` },
      buyerAccountId: buyer,
    });
    const { orders } = await completeCheckout(deps, {
      ...buyerCall(buyer),
      checkoutId: session.checkoutId,
      buyerAccountId: buyer,
    });
    const order = orders[0];
    if (!order) throw new Error('no order placed');
    return order;
  };

  const mailFor = async (orderId: number) => {
    const { rows } = await db.query<{
      recipient: string;
      subject: string;
      message_id: string;
      text_body: string;
    }>(
      `SELECT recipient, subject, message_id, text_body FROM ${schema}.outgoing_mail
        WHERE message_id LIKE $1 ORDER BY message_id`,
      [`<order-${orderId}-%`],
    );
    return rows;
  };

  const eventCount = async (orderId: number, type: string): Promise<number> => {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${schema}.events WHERE stream_id = $1 AND type = $2`,
      [`order_${orderId}`, type],
    );
    return rows[0]?.n ?? 0;
  };

  const shipAndDeliver = async (orderId: number, seller = SELLER) => {
    await markShipped(deps, {
      ...sellerCall(seller),
      sellerAccountId: seller,
      orderIds: [orderId],
      tracking: {},
    });
    await markDelivered(deps, { ...sellerCall(seller), orderId, sellerAccountId: seller });
  };

  describe('order lists', () => {
    it('pages the buyer’s own orders newest first; another account’s never appear', async () => {
      const mine = [await placeOrder(), await placeOrder(), await placeOrder()];
      const theirs = await placeOrder({ buyer: OTHER_BUYER, seller: OTHER_SELLER });
      const first = await listBuyerOrders(deps, { buyerAccountId: BUYER, status: '', limit: 2, cursor: '' });
      expect(first.orders.map((o) => o.orderId)).toEqual([mine[2]?.orderId, mine[1]?.orderId]);
      expect(first.nextCursor).toBeDefined();
      const all: number[] = first.orders.map((o) => o.orderId);
      let cursor = first.nextCursor;
      while (cursor !== undefined) {
        const page = await listBuyerOrders(deps, { buyerAccountId: BUYER, status: '', limit: 2, cursor });
        all.push(...page.orders.map((o) => o.orderId));
        cursor = page.nextCursor;
      }
      expect(all).toEqual(expect.arrayContaining(mine.map((o) => o.orderId)));
      expect(all).not.toContain(theirs.orderId);
      expect(new Set(all).size).toBe(all.length);

      const other = await listBuyerOrders(deps, {
        buyerAccountId: OTHER_BUYER,
        status: '',
        limit: 100,
        cursor: '',
      });
      expect(other.orders.map((o) => o.orderId)).toEqual([theirs.orderId]);
      const sellers = await listSellerOrders(deps, {
        sellerAccountId: OTHER_SELLER,
        status: 'awaiting_shipment',
        limit: 100,
        cursor: '',
      });
      expect(sellers.orders.map((o) => o.orderId)).toEqual([theirs.orderId]);
      const shipped = await listSellerOrders(deps, {
        sellerAccountId: OTHER_SELLER,
        status: 'shipped',
        limit: 100,
        cursor: '',
      });
      expect(shipped.orders).toEqual([]);
    });

    it('names the field of a bad status, limit or cursor', async () => {
      const base = { buyerAccountId: BUYER, status: '', limit: 10, cursor: '' };
      expect(await violationPaths(listBuyerOrders(deps, { ...base, status: 'lost' }))).toEqual(['status']);
      expect(await violationPaths(listBuyerOrders(deps, { ...base, limit: 101 }))).toEqual(['limit']);
      expect(await violationPaths(listBuyerOrders(deps, { ...base, cursor: "1'; drop" }))).toEqual([
        'cursor',
      ]);
      expect(await violationPaths(listDisputes(deps, { status: 'pending', limit: 10, cursor: '' }))).toEqual([
        'status',
      ]);
    });
  });

  describe('cancellation', () => {
    it('lets the buyer cancel before shipment: cancelled, both sides emailed, the stock back once', async () => {
      const order = await placeOrder({ quantity: 3 });
      expect(listings.stockOf(order.productId)).toBe(7);
      const cancelled = await cancelOrder(deps, {
        ...buyerCall(),
        orderId: order.orderId,
        by: 'buyer',
        accountId: BUYER,
        reason: 'ordered twice',
      });
      expect(cancelled).toMatchObject({
        status: 'cancelled',
        cancellation: { by: 'buyer', reason: 'ordered twice', cancelledAt: NOW },
      });
      // Released after the commit, by the job.
      expect(listings.stockOf(order.productId)).toBe(7);
      expect(await releaseCancelledStock(deps)).toBeGreaterThanOrEqual(1);
      expect(listings.stockOf(order.productId)).toBe(10);

      // A replay answers the cancelled order and releases nothing more.
      const again = await cancelOrder(deps, {
        ...buyerCall(),
        orderId: order.orderId,
        by: 'buyer',
        accountId: BUYER,
      });
      expect(again.status).toBe('cancelled');
      expect(await releaseCancelledStock(deps)).toBe(0);
      expect(listings.stockOf(order.productId)).toBe(10);
      expect(await eventCount(order.orderId, 'OrderCancelled')).toBe(1);

      const mail = await mailFor(order.orderId);
      expect(mail.map((m) => [m.recipient, m.message_id])).toEqual([
        ['buyer41@example.com', `<order-${order.orderId}-cancelled-buyer@marketplace.invalid>`],
        ['seller@example.com', `<order-${order.orderId}-cancelled-seller@marketplace.invalid>`],
      ]);
      expect(mail[1]?.text_body).toContain('ordered twice');
      expect(mail[1]?.text_body).toContain('Do not ship it');
    });

    it('lets the seller who cannot fulfil cancel; another account’s order is not found', async () => {
      const order = await placeOrder();
      expect(
        await kindOf(
          cancelOrder(deps, {
            ...buyerCall(OTHER_BUYER),
            orderId: order.orderId,
            by: 'buyer',
            accountId: OTHER_BUYER,
          }),
        ),
      ).toBe('not_found');
      expect(
        await kindOf(
          cancelOrder(deps, {
            ...sellerCall(OTHER_SELLER),
            orderId: order.orderId,
            by: 'seller',
            accountId: OTHER_SELLER,
          }),
        ),
      ).toBe('not_found');
      // A buyer id that happens to equal the seller's account id is still not the seller.
      expect(
        await kindOf(
          cancelOrder(deps, { ...buyerCall(SELLER), orderId: order.orderId, by: 'buyer', accountId: SELLER }),
        ),
      ).toBe('not_found');
      const cancelled = await cancelOrder(deps, {
        ...sellerCall(),
        orderId: order.orderId,
        by: 'seller',
        accountId: SELLER,
        reason: 'water damage in the warehouse',
      });
      expect(cancelled.cancellation).toMatchObject({ by: 'seller' });
      await releaseCancelledStock(deps);
      expect(listings.stockOf(order.productId)).toBe(10);
      expect((await mailFor(order.orderId)).map((m) => m.recipient).sort()).toEqual([
        'buyer41@example.com',
        'seller@example.com',
      ]);
    });

    it('refuses cancelling a shipped order with a conflict, and a reason over 1000 characters', async () => {
      const order = await placeOrder();
      expect(
        await violationPaths(
          cancelOrder(deps, {
            ...buyerCall(),
            orderId: order.orderId,
            by: 'buyer',
            accountId: BUYER,
            reason: 'x'.repeat(1_001),
          }),
        ),
      ).toEqual(['reason']);
      await markShipped(deps, {
        ...sellerCall(),
        sellerAccountId: SELLER,
        orderIds: [order.orderId],
        tracking: {},
      });
      expect(
        await kindOf(
          cancelOrder(deps, { ...buyerCall(), orderId: order.orderId, by: 'buyer', accountId: BUYER }),
        ),
      ).toBe('conflict');
      expect(await releaseCancelledStock(deps)).toBe(0);
      expect(listings.stockOf(order.productId)).toBe(8);
    });

    it('lets exactly one of a racing cancel and ship win, and releases the stock only if cancelled', async () => {
      for (let round = 0; round < 4; round++) {
        const order = await placeOrder();
        const [cancel, ship] = await Promise.all([
          kindOf(
            cancelOrder(deps, { ...buyerCall(), orderId: order.orderId, by: 'buyer', accountId: BUYER }),
          ),
          markShipped(deps, {
            ...sellerCall(),
            sellerAccountId: SELLER,
            orderIds: [order.orderId],
            tracking: {},
          }),
        ]);
        await releaseCancelledStock(deps);
        const [final] = (
          await listBuyerOrders(deps, { buyerAccountId: BUYER, status: '', limit: 1, cursor: '' })
        ).orders;
        expect(final?.orderId).toBe(order.orderId);
        if (final?.status === 'cancelled') {
          expect(cancel).toBe('ok');
          expect(ship.skipped).toEqual([expect.objectContaining({ reason: 'not_shippable' })]);
          expect(listings.stockOf(order.productId)).toBe(10);
        } else {
          expect(final?.status).toBe('shipped');
          expect(cancel).toBe('conflict');
          expect(ship.updated).toHaveLength(1);
          expect(listings.stockOf(order.productId)).toBe(8);
        }
      }
    });

    it('retries a release the listing service refused, after a backoff', async () => {
      const order = await placeOrder();
      let failures = 1;
      const flaky = {
        ...deps,
        listings: {
          get: listings.get.bind(listings),
          reserve: listings.reserve.bind(listings),
          release: (productId: string, reservationId: string) =>
            failures-- > 0
              ? Promise.reject(unavailable('listing service down'))
              : listings.release(productId, reservationId),
        },
      };
      await cancelOrder(flaky, { ...buyerCall(), orderId: order.orderId, by: 'buyer', accountId: BUYER });
      expect(await releaseCancelledStock(flaky)).toBe(0);
      expect(await releaseCancelledStock(flaky)).toBe(0); // not due yet
      clock.advance(1 * SEC);
      expect(await releaseCancelledStock(flaky)).toBe(1);
      expect(listings.stockOf(order.productId)).toBe(10);
      expect(await deps.stockReleases.find(db, order.orderId)).toMatchObject({
        attempts: 2,
        releasedAt: NOW + SEC,
      });
    });
  });

  describe('dispute resolution', () => {
    const disputed = async (priceCents = 1_000) => {
      const order = await placeOrder({ priceCents });
      await shipAndDeliver(order.orderId);
      await openDispute(deps, {
        ...buyerCall(),
        orderId: order.orderId,
        buyerAccountId: BUYER,
        reason: 'damaged',
        description: 'Crushed pallet',
        photoUrls: [],
      });
      return order;
    };

    it('resolves a disputed order once, emails both sides, and lists it among resolved disputes', async () => {
      const order = await disputed();
      const open = await listDisputes(deps, { status: 'open', limit: 100, cursor: '' });
      expect(open.orders.map((o) => o.orderId)).toContain(order.orderId);
      const resolved = await resolveDispute(deps, {
        ...adminCall,
        orderId: order.orderId,
        resolution: 'partially_refunded',
        refundCents: 500,
        note: 'Half the units were crushed.',
      });
      expect(resolved).toMatchObject({
        status: 'resolved',
        resolution: {
          resolution: 'partially_refunded',
          refundCents: 500,
          note: 'Half the units were crushed.',
        },
      });
      // The same decision again changes nothing; another one is a conflict.
      const again = await resolveDispute(deps, {
        ...adminCall,
        orderId: order.orderId,
        resolution: 'partially_refunded',
        refundCents: 500,
        note: 'Half the units were crushed.',
      });
      expect(again.status).toBe('resolved');
      expect(await eventCount(order.orderId, 'DisputeResolved')).toBe(1);
      expect(
        await kindOf(
          resolveDispute(deps, { ...adminCall, orderId: order.orderId, resolution: 'rejected', note: 'No' }),
        ),
      ).toBe('conflict');

      expect(
        (await listDisputes(deps, { status: 'open', limit: 100, cursor: '' })).orders.map((o) => o.orderId),
      ).not.toContain(order.orderId);
      expect(
        (await listDisputes(deps, { status: 'resolved', limit: 100, cursor: '' })).orders.map(
          (o) => o.orderId,
        ),
      ).toContain(order.orderId);
      const mail = await mailFor(order.orderId);
      expect(mail.map((m) => m.recipient).sort()).toEqual(['buyer41@example.com', 'seller@example.com']);
      expect(mail[0]?.subject).toBe(`Dispute on order ${order.orderId} resolved: partially_refunded`);
      expect(mail[0]?.text_body).toContain('Refund: 500 USD cents.');
      expect(mail[0]?.text_body).toContain('Half the units were crushed.');
    });

    it('refunds the total, and refuses a partial refund above the total or a missing note, naming the field', async () => {
      const order = await disputed(1_000); // 2 units: total 2000
      const call = { ...adminCall, orderId: order.orderId };
      expect(
        await violationPaths(
          resolveDispute(deps, { ...call, resolution: 'partially_refunded', refundCents: 2_001, note: 'n' }),
        ),
      ).toEqual(['refund_amount']);
      expect(
        await violationPaths(resolveDispute(deps, { ...call, resolution: 'partially_refunded', note: 'n' })),
      ).toEqual(['refund_amount']);
      expect(
        await violationPaths(
          resolveDispute(deps, { ...call, resolution: 'refunded', refundCents: 10, note: 'n' }),
        ),
      ).toEqual(['refund_amount']);
      expect(
        await violationPaths(resolveDispute(deps, { ...call, resolution: 'replaced', note: '  ' })),
      ).toEqual(['note']);
      const refunded = await resolveDispute(deps, { ...call, resolution: 'refunded', note: 'Full refund.' });
      expect(refunded.resolution).toMatchObject({ resolution: 'refunded', refundCents: 2_000 });
    });

    it('refuses to resolve an order without a dispute, and an unknown order is not found', async () => {
      const order = await placeOrder();
      expect(
        await kindOf(
          resolveDispute(deps, { ...adminCall, orderId: order.orderId, resolution: 'rejected', note: 'n' }),
        ),
      ).toBe('conflict');
      expect(
        await kindOf(
          resolveDispute(deps, { ...adminCall, orderId: 987_654_321, resolution: 'rejected', note: 'n' }),
        ),
      ).toBe('not_found');
    });
  });

  it('counts an order placed seconds ago in the seller’s inbox, whatever its ship-by deadline', async () => {
    const order = await placeOrder();
    clock.advance(5 * SEC);
    const inbox = await sellerAttention(deps, { sellerAccountId: SELLER, windowHours: 1, limit: 50 });
    expect(inbox.atRisk.orders.map((o) => o.orderId)).not.toContain(order.orderId);
    expect(inbox.newOrders.orders.map((o) => o.orderId)).toContain(order.orderId);
    const other = await sellerAttention(deps, { sellerAccountId: OTHER_SELLER, windowHours: 1, limit: 50 });
    expect(other.newOrders.orders.map((o) => o.orderId)).not.toContain(order.orderId);
  });

  it('emails the seller of a new order once, and waits for an address it does not know', async () => {
    const order = await placeOrder({ quantity: 3 });
    const notice = { kind: 'placed' as const, orderId: order.orderId };
    expect(await db.transaction((tx) => queueSellerNotice(deps, tx, notice))).toBe(1);
    // A redelivered event queues the same Message-ID, which the queue keeps once.
    await db.transaction((tx) => queueSellerNotice(deps, tx, notice));
    const mail = await mailFor(order.orderId);
    expect(mail).toEqual([
      expect.objectContaining({
        recipient: 'seller@example.com',
        message_id: `<order-${order.orderId}-placed-seller@marketplace.invalid>`,
        subject: `New order ${order.orderId}: 3 x Lot ${order.productId}`,
      }),
    ]);
    expect(mail[0]?.text_body).toContain('Ship by');
    const unknownSeller = await placeOrder({ seller: OTHER_SELLER });
    expect(
      await db.transaction((tx) =>
        queueSellerNotice(deps, tx, { kind: 'placed', orderId: unknownSeller.orderId }),
      ),
    ).toBe(0);
  });
});
