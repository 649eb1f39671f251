import { describe, expect, it } from '@jest/globals';
import { fold } from '@marketplace/eventsourcing';
import type { OrderCommand } from '../src/domain/order.commands.js';
import { orderDecider } from '../src/domain/order.decider.js';
import type { OrderEvent, PlacedOrder } from '../src/domain/order.events.js';

const NOW = Date.UTC(2026, 8, 1, 12);
const HOUR = 3_600_000;
const placed: PlacedOrder = {
  orderId: 1,
  checkoutId: 'checkout_x',
  reservationId: 'checkout_x:1:0',
  productId: 'product_1',
  productName: 'Lot',
  sellerAccountId: 7,
  buyerAccountId: 41,
  buyer: { email: 'b@example.com' },
  quantity: 2,
  unitPriceCents: 100,
  totalCents: 200,
  currency: 'USD',
  paymentTerms: 'net_30',
  placedAt: NOW,
  shipBy: NOW + 72 * HOUR,
};
const meta = (now = NOW) => ({ now, actor: { kind: 'system' as const, id: 'test' } });
const cmd = (type: OrderCommand['type'], data: object = {}, now = NOW) =>
  ({ type, data, metadata: meta(now) }) as OrderCommand;

/** Runs the commands in turn and answers the events of the last one, or its error. */
const given = (commands: OrderCommand[]): { events: readonly OrderEvent[] } | { error: unknown } => {
  let state = orderDecider.initialState();
  let events: readonly OrderEvent[] = [];
  for (const command of commands) {
    try {
      events = orderDecider.decide(command, state);
    } catch (error) {
      return { error };
    }
    state = fold(orderDecider, events, state);
  }
  return { events };
};

const place = cmd('PlaceOrder', { order: placed });
const ship = cmd('MarkShipped', { tracking: { trackingNumber: 'T1' } });
const deliver = cmd('MarkDelivered', {}, NOW + 10 * HOUR);

describe('order decider', () => {
  it('walks awaiting_shipment → shipped → delivered (48 h inspection) → completed', () => {
    expect(given([place, ship, deliver])).toEqual({
      events: [
        {
          type: 'OrderDelivered',
          data: { deliveredAt: NOW + 10 * HOUR, inspectionDeadline: NOW + 58 * HOUR },
        },
      ],
    });
    expect(given([place, ship, deliver, cmd('ConfirmOrder', {}, NOW + 11 * HOUR)])).toEqual({
      events: [
        { type: 'OrderCompleted', data: { completedAt: NOW + 11 * HOUR, completion: 'buyer_confirmed' } },
      ],
    });
  });

  it('ships idempotently with the same tracking and refuses other tracking once shipped', () => {
    expect(given([place, ship, ship])).toEqual({ events: [] });
    expect(given([place, ship, cmd('MarkShipped', { tracking: { trackingNumber: 'T2' } })])).toMatchObject({
      error: { kind: 'conflict' },
    });
  });

  it('completes after the inspection deadline only, and never twice', () => {
    const at = (hours: number) => cmd('CompleteAfterInspection', {}, NOW + hours * HOUR);
    expect(given([place, ship, deliver, at(57)])).toEqual({ events: [] });
    expect(given([place, ship, deliver, at(58)])).toMatchObject({
      events: [{ type: 'OrderCompleted', data: { completion: 'inspection_window_passed' } }],
    });
    expect(given([place, ship, deliver, at(58), at(59)])).toEqual({ events: [] });
    expect(given([place, at(100)])).toEqual({ events: [] });
  });

  it('takes a dispute only on a delivered order within its window, and then no longer completes by itself', () => {
    const dispute = (now: number) =>
      cmd('OpenDispute', { reason: 'damaged', description: 'Crushed pallet', photoUrls: [] }, now);
    expect(given([place, ship, dispute(NOW)])).toMatchObject({ error: { kind: 'conflict' } });
    expect(given([place, ship, deliver, dispute(NOW + 59 * HOUR)])).toMatchObject({
      error: { kind: 'conflict' },
    });
    expect(given([place, ship, deliver, dispute(NOW + 20 * HOUR)])).toMatchObject({
      events: [
        { type: 'IssueReported', data: { issue: { reason: 'damaged', reportedAt: NOW + 20 * HOUR } } },
      ],
    });
    expect(
      given([
        place,
        ship,
        deliver,
        dispute(NOW + 20 * HOUR),
        cmd('CompleteAfterInspection', {}, NOW + 99 * HOUR),
      ]),
    ).toEqual({ events: [] });
  });

  it('names every invalid dispute field', () => {
    const result = given([
      place,
      ship,
      deliver,
      cmd(
        'OpenDispute',
        {
          reason: 'meh',
          description: ' ',
          requestedAction: 'cash',
          photoUrls: Array.from({ length: 11 }, () => 'u'),
        },
        NOW + 11 * HOUR,
      ),
    ]);
    expect(result).toMatchObject({
      error: {
        kind: 'validation',
        violations: [
          { path: 'reason' },
          { path: 'description' },
          { path: 'requested_action' },
          { path: 'photo_urls' },
        ],
      },
    });
    expect(
      given([
        place,
        ship,
        deliver,
        cmd(
          'OpenDispute',
          { reason: 'other', description: '😀'.repeat(2_000), photoUrls: [] },
          NOW + HOUR * 11,
        ),
      ]),
    ).toMatchObject({ events: [{ type: 'IssueReported' }] });
  });

  it('refuses to deliver an order that was not shipped, or to confirm one that was not delivered', () => {
    expect(given([place, deliver])).toMatchObject({ error: { kind: 'conflict' } });
    expect(given([place, ship, cmd('ConfirmOrder')])).toMatchObject({ error: { kind: 'conflict' } });
  });

  describe('cancellation', () => {
    const cancel = (by: 'buyer' | 'seller', reason?: string) => cmd('CancelOrder', { by, reason });

    it('cancels an order awaiting shipment, by either side; a repeat decides nothing', () => {
      expect(given([place, cancel('buyer', ' changed plans ')])).toEqual({
        events: [
          {
            type: 'OrderCancelled',
            data: { cancellation: { by: 'buyer', reason: 'changed plans', cancelledAt: NOW } },
          },
        ],
      });
      expect(given([place, cancel('seller')])).toMatchObject({
        events: [{ type: 'OrderCancelled', data: { cancellation: { by: 'seller', reason: undefined } } }],
      });
      expect(given([place, cancel('buyer'), cancel('buyer')])).toEqual({ events: [] });
    });

    it('refuses cancelling once shipped or delivered, and shipping once cancelled', () => {
      expect(given([place, ship, cancel('buyer')])).toMatchObject({ error: { kind: 'conflict' } });
      expect(given([place, ship, deliver, cancel('seller')])).toMatchObject({ error: { kind: 'conflict' } });
      expect(given([place, cancel('seller'), ship])).toMatchObject({ error: { kind: 'conflict' } });
      expect(given([place, cancel('buyer', 'x'.repeat(1_001))])).toMatchObject({
        error: { kind: 'validation', violations: [{ path: 'reason' }] },
      });
    });
  });

  describe('dispute resolution', () => {
    const dispute = cmd(
      'OpenDispute',
      { reason: 'damaged', description: 'Crushed', photoUrls: [] },
      NOW + 11 * HOUR,
    );
    const resolve = (resolution: string, refundCents?: number, note = 'Checked the photos.') =>
      cmd('ResolveDispute', { resolution, refundCents, note }, NOW + 30 * HOUR);

    it('resolves a disputed order; a refund is the total, a partial refund the amount given', () => {
      expect(given([place, ship, deliver, dispute, resolve('refunded')])).toEqual({
        events: [
          {
            type: 'DisputeResolved',
            data: {
              resolution: {
                resolution: 'refunded',
                refundCents: 200,
                note: 'Checked the photos.',
                resolvedAt: NOW + 30 * HOUR,
              },
            },
          },
        ],
      });
      expect(given([place, ship, deliver, dispute, resolve('partially_refunded', 200)])).toMatchObject({
        events: [{ data: { resolution: { refundCents: 200 } } }],
      });
      expect(given([place, ship, deliver, dispute, resolve('rejected')])).toMatchObject({
        events: [{ data: { resolution: { resolution: 'rejected', refundCents: 0 } } }],
      });
    });

    it('answers the same decision again with nothing, and another decision with a conflict', () => {
      const decided = [place, ship, deliver, dispute, resolve('replaced')];
      expect(given([...decided, resolve('replaced')])).toEqual({ events: [] });
      expect(given([...decided, resolve('rejected')])).toMatchObject({ error: { kind: 'conflict' } });
    });

    it('refuses resolving an order without a dispute, and names invalid fields', () => {
      expect(given([place, ship, deliver, resolve('refunded')])).toMatchObject({
        error: { kind: 'conflict' },
      });
      const disputed = [place, ship, deliver, dispute];
      expect(given([...disputed, resolve('partially_refunded', 201)])).toMatchObject({
        error: { kind: 'validation', violations: [{ path: 'refund_amount' }] },
      });
      expect(given([...disputed, resolve('partially_refunded', 0)])).toMatchObject({
        error: { kind: 'validation', violations: [{ path: 'refund_amount' }] },
      });
      expect(given([...disputed, resolve('replaced', 5)])).toMatchObject({
        error: { kind: 'validation', violations: [{ path: 'refund_amount' }] },
      });
      expect(given([...disputed, resolve('voided', undefined, ' ')])).toMatchObject({
        error: { kind: 'validation', violations: [{ path: 'resolution' }, { path: 'note' }] },
      });
    });
  });
});
