import { describe, expect, it } from '@jest/globals';
import { fold } from '@marketplace/eventsourcing';
import type { CheckoutCommand } from '../src/domain/checkout.commands.js';
import { checkoutDecider } from '../src/domain/checkout.decider.js';
import type { CheckoutEvent, CheckoutSession } from '../src/domain/checkout.events.js';

const NOW = Date.UTC(2026, 8, 1, 12);
const MINUTE = 60_000;
const session: CheckoutSession = {
  checkoutId: 'checkout_00000000-0000-4000-8000-000000000001',
  status: 'ready_for_complete',
  lines: [
    {
      productId: 'product_1',
      productName: 'Lot',
      sellerAccountId: 7,
      quantity: 2,
      unitPriceCents: 100,
      lineTotalCents: 200,
      freightCents: 0,
    },
  ],
  subtotalCents: 200,
  freightCents: 0,
  currency: 'USD',
  messages: [],
  buyerAccountId: 41,
  createdAt: NOW,
  expiresAt: NOW + 30 * MINUTE,
  attempt: 0,
  orderIds: [],
};
const cmd = (type: CheckoutCommand['type'], data: object = {}, now = NOW) =>
  ({ type, data, metadata: { now, actor: { kind: 'system' as const, id: 'test' } } }) as CheckoutCommand;

/** The events of the last command after the others, or its error. */
const given = (commands: CheckoutCommand[]): { events: readonly CheckoutEvent[] } | { error: unknown } => {
  let state = checkoutDecider.initialState();
  let events: readonly CheckoutEvent[] = [];
  for (const command of commands) {
    try {
      events = checkoutDecider.decide(command, state);
    } catch (error) {
      return { error };
    }
    state = fold(checkoutDecider, events, state);
  }
  return { events };
};

const create = cmd('CreateCheckout', { session });
const repriced: CheckoutSession = {
  ...session,
  checkoutId: 'checkout_other',
  createdAt: NOW + MINUTE,
  status: 'requires_escalation',
  messages: ['over the bulk threshold; use request_quote'],
  expiresAt: NOW + 31 * MINUTE,
};
const update = (buyerAccountId = 41, now = NOW + MINUTE) =>
  cmd('UpdateCheckout', { buyerAccountId, session: repriced }, now);
const cancel = (buyerAccountId = 41) => cmd('CancelCheckout', { buyerAccountId });
const kindOf = (result: ReturnType<typeof given>) =>
  'error' in result ? (result.error as { kind?: string }).kind : 'ok';

describe('checkout decider: update and cancel', () => {
  it('takes the new pricing, keeping the id, the buyer, the creation time and the attempts', () => {
    expect(given([create, update()])).toEqual({
      events: [
        {
          type: 'CheckoutUpdated',
          data: { session: { ...repriced, checkoutId: session.checkoutId, createdAt: NOW } },
        },
      ],
    });
  });

  it('is not found for another buyer, and a conflict once expired, completing, completed or canceled', () => {
    expect(kindOf(given([create, update(42)]))).toBe('not_found');
    expect(kindOf(given([create, cancel(42)]))).toBe('not_found');
    expect(kindOf(given([create, update(41, NOW + 31 * MINUTE)]))).toBe('conflict');
    const start = cmd('StartCompletion', { buyerAccountId: 41 });
    expect(kindOf(given([create, start, update()]))).toBe('conflict');
    expect(kindOf(given([create, start, cancel()]))).toBe('conflict');
    const finish = cmd('FinishCompletion', { attempt: 1, orderIds: [5] });
    expect(kindOf(given([create, start, finish, cancel()]))).toBe('conflict');
    expect(kindOf(given([create, cancel(), update()]))).toBe('conflict');
    expect(kindOf(given([create, cancel(), start]))).toBe('conflict');
  });

  it('cancels an open session, escalated or not, once', () => {
    expect(given([create, cancel()])).toEqual({ events: [{ type: 'CheckoutCanceled', data: {} }] });
    expect(given([create, update(), cancel()])).toEqual({ events: [{ type: 'CheckoutCanceled', data: {} }] });
    expect(given([create, cancel(), cancel()])).toEqual({ events: [] });
    const state = fold(checkoutDecider, [
      { type: 'CheckoutCreated', data: { session } },
      { type: 'CheckoutCanceled', data: {} },
    ]);
    expect(state).toMatchObject({ status: 'created', session: { status: 'canceled' } });
  });
});
