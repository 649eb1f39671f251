import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '@marketplace/database/testing';
import { createLogger, ManualClock } from '@marketplace/platform';
import { orderMigrations } from '../src/adapters/order.migrations.js';
import {
  cancelCheckout,
  completeCheckout,
  createCheckout,
  getCheckout,
  updateCheckout,
} from '../src/application/checkout.js';
import type { OrderDependencies } from '../src/application/order.dependencies.js';
import { orderSettingsSchema } from '../src/order.config.js';
import { orderDependencies } from '../src/order.service.js';
import { kindOf } from './support/errors.js';
import { InMemoryListings, InMemoryQuotes } from './support/in-memory-ports.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const MINUTE = 60_000;
const BUYER = 41;
const OTHER_BUYER = 42;
const buyerCall = (id = BUYER) => ({ actor: { kind: 'buyer' as const, id: String(id) } });

/** UpdateCheckout and CancelCheckout (UCP's update and cancel, ACP's update and cancel), and keyed completion. */
describe.each(testEngines())('checkout changes on $name', ({ create }) => {
  const schema = freshSchemaName('order_changes_test');
  let db: Database;
  let deps: OrderDependencies;
  let listings: InMemoryListings;
  const clock = new ManualClock(NOW);
  let nextProduct = 1;
  const newProduct = (overrides: Partial<Parameters<InMemoryListings['add']>[0]> = {}) =>
    listings.add({ productId: `product_${nextProduct++}`, ...overrides });

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
    deps = orderDependencies({
      db,
      clock,
      logger: createLogger({ service: 'order-test', level: 'silent' }),
      schema,
      ports: { listings, quotes: new InMemoryQuotes() },
      settings: orderSettingsSchema.parse({}),
      onDisputeRecorded: () => undefined,
    });
  });

  const session = (productId: string, quantity = 2, buyerAccountId: number | null = BUYER) =>
    createCheckout(deps, {
      ...buyerCall(),
      lines: [{ productId, quantity }],
      buyer: { email: 'buyer@example.com' },
      buyerAccountId: buyerAccountId ?? undefined,
    });
  const mine = (checkoutId: string, id = BUYER) => ({ ...buyerCall(id), checkoutId, buyerAccountId: id });

  it('prices a session again with new lines: out of escalation and back, with a new expiry', async () => {
    const product = newProduct({ priceCents: 100, quantity: 1_000 });
    const created = await session(product.productId, 150);
    expect(created.status).toBe('requires_escalation');
    clock.advance(10 * MINUTE);
    const fewer = await updateCheckout(deps, {
      ...mine(created.checkoutId),
      lines: [{ productId: product.productId, quantity: 40 }],
      shippingCountry: 'DE',
    });
    expect(fewer).toMatchObject({
      checkoutId: created.checkoutId,
      status: 'ready_for_complete',
      subtotalCents: 4_000,
      messages: [],
      shippingCountry: 'DE',
      buyer: { email: 'buyer@example.com' },
      createdAt: NOW,
      expiresAt: NOW + 40 * MINUTE,
    });
    const more = await updateCheckout(deps, {
      ...mine(created.checkoutId),
      lines: [{ productId: product.productId, quantity: 101 }],
    });
    expect(more).toMatchObject({ status: 'requires_escalation', shippingCountry: 'DE' });
    expect(more.messages.join(' ')).toMatch(/request_quote/);
    expect((await getCheckout(deps, created.checkoutId, BUYER)).session).toEqual(more);
  });

  it('keeps the lines when none are given, priced at the listing price of now', async () => {
    const product = newProduct({ priceCents: 1_000 });
    const created = await session(product.productId);
    listings.add({ ...product, priceCents: 900 });
    const repriced = await updateCheckout(deps, {
      ...mine(created.checkoutId),
      buyer: { email: 'ops@example.com', name: 'Ops' },
    });
    expect(repriced).toMatchObject({
      subtotalCents: 1_800,
      buyer: { email: 'ops@example.com', name: 'Ops' },
      lines: [{ productId: product.productId, quantity: 2, unitPriceCents: 900 }],
    });
  });

  it('names the field of a bad line, and changes nothing', async () => {
    const product = newProduct({ minOrderQuantity: 5 });
    const created = await session(product.productId, 5);
    await expect(
      updateCheckout(deps, {
        ...mine(created.checkoutId),
        lines: [{ productId: 'product_999', quantity: 1 }],
      }),
    ).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'line_items/0/product_id', message: 'no product product_999' }],
    });
    await expect(
      updateCheckout(deps, { ...mine(created.checkoutId), shippingCountry: 'XX' }),
    ).rejects.toMatchObject({ kind: 'validation', violations: [{ path: 'shipping_country' }] });
    expect((await getCheckout(deps, created.checkoutId, BUYER)).session).toEqual(created);
  });

  it("is another buyer's or an anonymous session for nobody: not found", async () => {
    const product = newProduct();
    const created = await session(product.productId);
    const anonymous = await session(product.productId, 2, null);
    expect(await kindOf(updateCheckout(deps, mine(created.checkoutId, OTHER_BUYER)))).toBe('not_found');
    expect(await kindOf(cancelCheckout(deps, mine(created.checkoutId, OTHER_BUYER)))).toBe('not_found');
    expect(await kindOf(updateCheckout(deps, mine(anonymous.checkoutId)))).toBe('not_found');
    expect(await kindOf(cancelCheckout(deps, mine(anonymous.checkoutId)))).toBe('not_found');
    expect(await kindOf(cancelCheckout(deps, mine('checkout_00000000-0000-4000-8000-000000000000')))).toBe(
      'not_found',
    );
    expect(await kindOf(cancelCheckout(deps, mine('order_1')))).toBe('validation');
  });

  it('cancels an open session once; a canceled session neither changes nor completes', async () => {
    const product = newProduct();
    const created = await session(product.productId);
    const canceled = await cancelCheckout(deps, mine(created.checkoutId));
    expect(canceled).toMatchObject({ status: 'canceled', messages: [] });
    expect(await cancelCheckout(deps, mine(created.checkoutId))).toEqual(canceled);
    await expect(updateCheckout(deps, mine(created.checkoutId))).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/canceled/),
    });
    await expect(completeCheckout(deps, mine(created.checkoutId))).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/canceled/),
    });
    expect(listings.stockOf(product.productId)).toBe(50);
  });

  it('refuses to cancel or change a completed session, and to change an expired one', async () => {
    const product = newProduct();
    const created = await session(product.productId);
    await completeCheckout(deps, mine(created.checkoutId));
    expect(await kindOf(cancelCheckout(deps, mine(created.checkoutId)))).toBe('conflict');
    expect(await kindOf(updateCheckout(deps, mine(created.checkoutId)))).toBe('conflict');
    const later = await session(product.productId);
    clock.advance(31 * MINUTE);
    await expect(updateCheckout(deps, mine(later.checkoutId))).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/expired/),
    });
    // An expired session can still be canceled: nothing holds it.
    expect((await cancelCheckout(deps, mine(later.checkoutId))).status).toBe('canceled');
  });

  it('races a cancel against a completion: one wins, never a canceled session with orders or held stock', async () => {
    for (let round = 0; round < 5; round++) {
      const product = newProduct();
      const created = await session(product.productId);
      const [completed, canceled] = await Promise.allSettled([
        completeCheckout(deps, mine(created.checkoutId)),
        cancelCheckout(deps, mine(created.checkoutId)),
      ]);
      const { session: now, orders } = await getCheckout(deps, created.checkoutId, BUYER);
      if (now.status === 'canceled') {
        expect(completed.status).toBe('rejected');
        expect(orders).toEqual([]);
        expect(listings.stockOf(product.productId)).toBe(50);
      } else {
        expect(now.status).toBe('completed');
        expect(completed.status).toBe('fulfilled');
        expect(canceled.status).toBe('rejected');
        expect(orders).toHaveLength(1);
        expect(listings.stockOf(product.productId)).toBe(48);
      }
    }
  });

  describe('with an idempotency key', () => {
    it('answers a repeated update as the session is now, and refuses the key with another change', async () => {
      const product = newProduct();
      const created = await session(product.productId);
      const change = {
        ...mine(created.checkoutId),
        lines: [{ productId: product.productId, quantity: 3 }],
        idempotencyKey: 'update-1',
      };
      const first = await updateCheckout(deps, change);
      listings.add({ ...product, priceCents: 1 });
      expect(await updateCheckout(deps, change)).toEqual(first);
      expect(
        await kindOf(
          updateCheckout(deps, { ...change, lines: [{ productId: product.productId, quantity: 4 }] }),
        ),
      ).toBe('idempotency_conflict');
      // A key is one request: the create's key does not update, nor cancel.
      const keyed = await createCheckout(deps, {
        ...buyerCall(),
        lines: [{ productId: product.productId, quantity: 1 }],
        buyerAccountId: BUYER,
        idempotencyKey: 'create-1',
      });
      expect(
        await kindOf(updateCheckout(deps, { ...mine(keyed.checkoutId), idempotencyKey: 'create-1' })),
      ).toBe('idempotency_conflict');
      expect(
        await kindOf(cancelCheckout(deps, { ...mine(keyed.checkoutId), idempotencyKey: 'create-1' })),
      ).toBe('idempotency_conflict');
    });

    it('records nothing for a refused update, so the key serves the corrected one', async () => {
      const product = newProduct();
      const created = await session(product.productId);
      const bad = { ...mine(created.checkoutId), shippingCountry: 'XX', idempotencyKey: 'update-2' };
      expect(await kindOf(updateCheckout(deps, bad))).toBe('validation');
      expect((await updateCheckout(deps, { ...bad, shippingCountry: 'FR' })).shippingCountry).toBe('FR');
    });

    it('completes once per key: a repeat answers the same orders, another session with the key is a conflict', async () => {
      const product = newProduct({ quantity: 10 });
      const created = await session(product.productId);
      const first = await completeCheckout(deps, {
        ...mine(created.checkoutId),
        idempotencyKey: 'complete-1',
      });
      const repeat = await completeCheckout(deps, {
        ...mine(created.checkoutId),
        idempotencyKey: 'complete-1',
      });
      expect(repeat.orders.map((o) => o.orderId)).toEqual(first.orders.map((o) => o.orderId));
      expect(listings.stockOf(product.productId)).toBe(8);
      const other = await session(product.productId);
      expect(
        await kindOf(completeCheckout(deps, { ...mine(other.checkoutId), idempotencyKey: 'complete-1' })),
      ).toBe('idempotency_conflict');
      expect(listings.stockOf(product.productId)).toBe(8);
    });

    it('records nothing for a completion refused as escalated', async () => {
      const product = newProduct({ priceCents: 100, quantity: 1_000 });
      const created = await session(product.productId, 150);
      const keyed = { ...mine(created.checkoutId), idempotencyKey: 'complete-2' };
      expect(await kindOf(completeCheckout(deps, keyed))).toBe('conflict');
      await updateCheckout(deps, {
        ...mine(created.checkoutId),
        lines: [{ productId: product.productId, quantity: 10 }],
      });
      expect((await completeCheckout(deps, keyed)).orders).toHaveLength(1);
    });

    it('answers a repeated cancel with the canceled session', async () => {
      const product = newProduct();
      const created = await session(product.productId);
      const keyed = { ...mine(created.checkoutId), idempotencyKey: 'cancel-1' };
      const canceled = await cancelCheckout(deps, keyed);
      expect(await cancelCheckout(deps, keyed)).toEqual(canceled);
    });
  });
});
