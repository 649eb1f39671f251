import { describe, expect, it } from '@jest/globals';
import { checkoutDecider } from '../src/domain/checkout.decider.js';
import type { CheckoutSession } from '../src/domain/checkout.events.js';
import type { ListingForCheckout } from '../src/domain/checkout.rules.js';
import { priceCheckout } from '../src/domain/checkout.rules.js';

const THRESHOLD = { moreThanUnits: 100, moreThanSubtotalCents: 500_000 };
const listing = (overrides: Partial<ListingForCheckout> = {}): ListingForCheckout => ({
  productId: 'product_1',
  name: 'Lot',
  sellerAccountId: 7,
  priceCents: 1_000,
  currency: 'USD',
  quantity: 1_000,
  minOrderQuantity: 1,
  instantCheckout: true,
  ...overrides,
});

describe('checkout pricing', () => {
  it('is ready at exactly the threshold and escalates one unit or one cent above it', () => {
    expect(priceCheckout(THRESHOLD, [{ listing: listing(), quantity: 100 }]).escalations).toEqual([]);
    expect(priceCheckout(THRESHOLD, [{ listing: listing(), quantity: 101 }]).escalations).toHaveLength(1);
    expect(
      priceCheckout(THRESHOLD, [{ listing: listing({ priceCents: 5_000 }), quantity: 100 }]).escalations,
    ).toEqual([]);
    expect(
      priceCheckout(THRESHOLD, [{ listing: listing({ priceCents: 5_001 }), quantity: 100 }]).escalations[0],
    ).toMatch(/\$5,001\.00 is over the bulk threshold.*request_quote/);
  });

  it('escalates above stock even for an agreed quote, which is exempt from the threshold', () => {
    const quote = { quoteRequestId: 3, productId: 'product_1', quantity: 500, unitPriceCents: 700 };
    const priced = priceCheckout(THRESHOLD, [{ listing: listing({ quantity: 400 }), quantity: 500, quote }]);
    expect(priced.lines[0]).toMatchObject({
      unitPriceCents: 700,
      lineTotalCents: 350_000,
      quoteRequestId: 3,
    });
    expect(priced.escalations).toEqual([expect.stringMatching(/only 400 units are in stock/)]);
  });

  it('totals the lines and refuses mixed currencies', () => {
    const priced = priceCheckout(THRESHOLD, [
      { listing: listing(), quantity: 2 },
      { listing: listing({ productId: 'product_2', priceCents: 250 }), quantity: 4 },
    ]);
    expect(priced).toMatchObject({ subtotalCents: 3_000, currency: 'USD', escalations: [] });
    expect(() =>
      priceCheckout(THRESHOLD, [
        { listing: listing(), quantity: 1 },
        { listing: listing({ currency: 'EUR' }), quantity: 1 },
      ]),
    ).toThrow(/one currency/);
  });
});

describe('checkout pricing: freight apart from goods (docs/specification.md, "Checkout and orders")', () => {
  const price = (freight: ListingForCheckout['freight'], quantities: number[]) =>
    priceCheckout(
      THRESHOLD,
      quantities.map((quantity) => ({ listing: listing({ freight }), quantity })),
    );

  it('charges no freight without terms, when included, and for buyer pickup', () => {
    for (const freight of [
      undefined,
      { mode: 'included' } as const,
      { mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' } as const,
    ]) {
      const priced = price(freight, [10]);
      expect(priced).toMatchObject({
        subtotalCents: 10_000,
        freightCents: 0,
        totalCents: 10_000,
        escalations: [],
      });
      expect(priced.lines[0]?.freightCents).toBe(0);
    }
  });

  it('charges a flat freight once per product, on its first line, however the lot is split', () => {
    const priced = price({ mode: 'flat_per_order', cents: 15_000 }, [10, 5]);
    expect(priced.lines.map((line) => line.freightCents)).toEqual([15_000, 0]);
    expect(priced).toMatchObject({ subtotalCents: 15_000, freightCents: 15_000, totalCents: 30_000 });
    expect(price({ mode: 'flat_per_order', cents: 15_000 }, [15]).totalCents).toBe(30_000);
  });

  it('charges per-unit freight on every unit of the product', () => {
    const priced = price({ mode: 'per_unit', cents: 250 }, [10, 6]);
    expect(priced.lines.map((line) => line.freightCents)).toEqual([4_000, 0]);
    expect(priced).toMatchObject({ subtotalCents: 16_000, freightCents: 4_000, totalCents: 20_000 });
  });

  it('keeps freight out of the bulk threshold, which counts goods only', () => {
    const priced = price({ mode: 'per_unit', cents: 10_000 }, [100]);
    expect(priced).toMatchObject({ subtotalCents: 100_000, freightCents: 1_000_000, escalations: [] });
  });

  it('prices a quoted product by the terms its quote recorded, not the listing’s later ones', () => {
    const quote = (freight?: ListingForCheckout['freight'] | null) => ({
      quoteRequestId: 3,
      productId: 'product_1',
      quantity: 500,
      unitPriceCents: 900,
      ...(freight === undefined ? {} : { freight }),
    });
    const now = listing({ freight: { mode: 'flat_per_order', cents: 20_000 } });
    const seen = priceCheckout(THRESHOLD, [
      { listing: now, quantity: 500, quote: quote({ mode: 'flat_per_order', cents: 15_000 }) },
    ]);
    expect(seen).toMatchObject({ subtotalCents: 450_000, freightCents: 15_000, totalCents: 465_000 });
    // Recorded with no terms set: the buyer saw no freight.
    const none = priceCheckout(THRESHOLD, [{ listing: now, quantity: 500, quote: quote(null) }]);
    expect(none.freightCents).toBe(0);
    // A quote recorded before quotes carried terms: the listing's apply.
    const legacy = priceCheckout(THRESHOLD, [{ listing: now, quantity: 500, quote: quote() }]);
    expect(legacy.freightCents).toBe(20_000);
    // Each line by its own terms, the flat charge once per product: the listing's while a line is unquoted.
    const mixed = priceCheckout(THRESHOLD, [
      { listing: now, quantity: 5 },
      { listing: now, quantity: 500, quote: quote({ mode: 'per_unit', cents: 10 }) },
    ]);
    expect(mixed.lines.map((line) => line.freightCents)).toEqual([25_000, 0]);
    const bothFlat = priceCheckout(THRESHOLD, [
      { listing: now, quantity: 500, quote: quote({ mode: 'flat_per_order', cents: 15_000 }) },
      { listing: now, quantity: 5 },
    ]);
    expect(bothFlat.freightCents).toBe(20_000);
  });

  it('never lets a quote recorded without freight carry other lines free of the listing’s freight', () => {
    const perUnit = listing({ freight: { mode: 'per_unit', cents: 100 } });
    const quote = {
      quoteRequestId: 3,
      productId: 'product_1',
      quantity: 500,
      unitPriceCents: 900,
      freight: null,
    };
    const priced = priceCheckout(THRESHOLD, [
      { listing: perUnit, quantity: 500, quote },
      { listing: perUnit, quantity: 90 },
    ]);
    expect(priced).toMatchObject({ freightCents: 9_000 });
    expect(priced.lines.map((line) => line.freightCents)).toEqual([9_000, 0]);
  });

  it('escalates freight quoted on request, naming freight, request_quote and the destination', () => {
    const priced = price({ mode: 'quoted_on_request' }, [10]);
    expect(priced.freightCents).toBe(0);
    expect(priced.escalations).toEqual([
      expect.stringMatching(/line 1 \(product_1\): the seller quotes freight.*request_quote.*destination/),
    ]);
    const quote = { quoteRequestId: 3, productId: 'product_1', quantity: 10, unitPriceCents: 1_200 };
    const quoted = priceCheckout(THRESHOLD, [
      { listing: listing({ freight: { mode: 'quoted_on_request' } }), quantity: 10, quote },
    ]);
    expect(quoted).toMatchObject({ escalations: [], freightCents: 0, totalCents: 12_000 });
  });
});

describe('checkout session decider', () => {
  const NOW = Date.UTC(2026, 8, 1);
  const session: CheckoutSession = {
    checkoutId: 'checkout_1',
    status: 'ready_for_complete',
    lines: [],
    subtotalCents: 0,
    currency: 'USD',
    messages: [],
    createdAt: NOW,
    expiresAt: NOW + 60_000,
    attempt: 0,
    orderIds: [],
  };
  const created = checkoutDecider.evolve(checkoutDecider.initialState(), {
    type: 'CheckoutCreated',
    data: { session },
  });
  const start = (now: number, buyerAccountId = 41) => ({
    type: 'StartCompletion' as const,
    data: { buyerAccountId },
    metadata: { now, actor: { kind: 'buyer' as const, id: String(buyerAccountId) } },
  });

  it('starts attempt n+1, carries on an attempt in progress, and refuses an expired session', () => {
    expect(checkoutDecider.decide(start(NOW), created)).toEqual([
      { type: 'CheckoutCompletionStarted', data: { attempt: 1, buyerAccountId: 41 } },
    ]);
    const completing = checkoutDecider.evolve(created, {
      type: 'CheckoutCompletionStarted',
      data: { attempt: 1, buyerAccountId: 41 },
    });
    expect(checkoutDecider.decide(start(NOW), completing)).toEqual([]);
    expect(() => checkoutDecider.decide(start(NOW + 60_001), created)).toThrow(/expired/);
    const failed = checkoutDecider.evolve(completing, {
      type: 'CheckoutCompletionFailed',
      data: { attempt: 1, reason: 'sold out' },
    });
    expect(checkoutDecider.decide(start(NOW), failed)).toEqual([
      { type: 'CheckoutCompletionStarted', data: { attempt: 2, buyerAccountId: 41 } },
    ]);
    // Bound to its buyer from the first attempt on.
    expect(() => checkoutDecider.decide(start(NOW, 42), failed)).toThrow(/no checkout session/);
  });
});
