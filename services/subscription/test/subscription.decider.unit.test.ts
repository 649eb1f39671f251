import { describe, expect, it } from '@jest/globals';
import type { RecordedEvent } from '@marketplace/eventsourcing';
import {
  decodeSubscriptionEvent,
  encodeSubscriptionEvent,
} from '../src/adapters/subscription-event.codec.js';
import type { SavedSearchesMatched } from '../src/domain/match-notification.js';
import { matchStreamIdOf } from '../src/domain/match-notification.js';
import { subscriptionDecider } from '../src/domain/subscription.decider.js';
import type { SubscriptionCommand, SubscriptionEvent } from '../src/domain/subscription.js';

const NOW = Date.UTC(2026, 0, 1);
const metadata = { now: NOW, actor: { kind: 'buyer', id: '42' } } as const;
const subscribe: SubscriptionCommand = {
  type: 'Subscribe',
  data: {
    subscriptionId: 'sub_1',
    ownerAccountId: 42,
    draft: {
      query: { category: 'toys', moqRange: { max: 10 }, extra: [1] },
      channels: [{ type: 'mcp_resource' }],
    },
  },
  metadata,
};
const unsubscribe = (data: {
  requesterAccountId?: number;
  unsubscribeTokenValid: boolean;
}): SubscriptionCommand => ({
  type: 'Unsubscribe',
  data: { subscriptionId: 'sub_1', ...data },
  metadata,
});
const { decide, evolve, initialState } = subscriptionDecider;

describe('subscription decider', () => {
  it('creates a subscription once', () => {
    const events = decide(subscribe, initialState());
    expect(events).toEqual([
      {
        type: 'SubscriptionCreated',
        data: {
          subscription: expect.objectContaining({
            subscriptionId: 'sub_1',
            ownerAccountId: 42,
            createdAt: NOW,
          }),
        },
      },
    ]);
    const state = events.reduce(evolve, initialState());
    expect(() => decide(subscribe, state)).toThrow(expect.objectContaining({ kind: 'conflict' }));
  });

  it('lets the owner or the token holder end it, once; anyone else sees nothing', () => {
    const active = decide(subscribe, initialState()).reduce(evolve, initialState());
    expect(() =>
      decide(unsubscribe({ requesterAccountId: 7, unsubscribeTokenValid: false }), active),
    ).toThrow(expect.objectContaining({ kind: 'not_found' }));
    expect(decide(unsubscribe({ unsubscribeTokenValid: true }), active)).toEqual([
      { type: 'SubscriptionDeleted', data: { deletedAt: NOW } },
    ]);
    const deleted = decide(
      unsubscribe({ requesterAccountId: 42, unsubscribeTokenValid: false }),
      active,
    ).reduce(evolve, active);
    expect(deleted.status).toBe('deleted');
    expect(() =>
      decide(unsubscribe({ requesterAccountId: 42, unsubscribeTokenValid: false }), deleted),
    ).toThrow(expect.objectContaining({ kind: 'not_found' }));
  });
});

describe('subscription event codec', () => {
  it('round-trips the events through protobuf, unknown query keys included', () => {
    const [created] = decide(subscribe, initialState());
    const recorded = (event: SubscriptionEvent, version: number): RecordedEvent => ({
      eventId: `e${version}`,
      streamId: 'sub_1',
      streamType: 'subscription',
      version,
      type: event.type,
      data: event.data,
      metadata: { actor: metadata.actor },
      occurredAt: NOW,
      globalPosition: String(version),
    });
    for (const [event, version] of [
      [created!, 1],
      [{ type: 'SubscriptionDeleted', data: { deletedAt: NOW + 1 } } as SubscriptionEvent, 2],
    ] as const) {
      const { value } = encodeSubscriptionEvent(recorded(event, version));
      // The envelope every service's codec decodes (DecodedEvent): the stream id is the subscription's.
      expect(decodeSubscriptionEvent(value)).toEqual({
        eventId: `e${version}`,
        streamId: 'sub_1',
        version,
        occurredAt: NOW,
        actor: metadata.actor,
        event,
      });
    }
  });

  it('round-trips a listing’s SavedSearchesMatched event (stream match_<product id>)', () => {
    const event: SavedSearchesMatched = {
      type: 'SavedSearchesMatched',
      data: { productId: 'product_7', subscriptionIds: ['sub_1', 'sub_2'], matchedAt: NOW },
    };
    const { value } = encodeSubscriptionEvent({
      eventId: 'e1',
      streamId: matchStreamIdOf('product_7'),
      streamType: 'subscription',
      version: 1,
      type: event.type,
      data: event.data,
      metadata: { actor: { kind: 'system', id: 'saved-search-matcher' } },
      occurredAt: NOW,
      globalPosition: '1',
    });
    expect(decodeSubscriptionEvent(value)).toEqual({
      eventId: 'e1',
      streamId: 'match_product_7',
      version: 1,
      occurredAt: NOW,
      actor: { kind: 'system', id: 'saved-search-matcher' },
      event,
    });
  });
});
