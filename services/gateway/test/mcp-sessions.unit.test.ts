import { describe, expect, it } from '@jest/globals';
import { subscriptionV1 } from '@marketplace/proto';
import type { Principal } from '../src/edge/account.js';
import type { McpSessionLimits, SessionHandle } from '../src/edge/mcp/mcp-sessions.js';
import { McpSessions, SubscriptionLimitError } from '../src/edge/mcp/mcp-sessions.js';
import { updatedResourcesOf } from '../src/contexts/subscriptions/saved-search-matches.js';

const keyOf = (prefix: string, accountId = 1): Principal => ({
  accountId,
  role: 'buyer',
  credential: { kind: 'api_key', keyPrefix: prefix },
});

class FakeSession implements SessionHandle {
  readonly updates: string[] = [];
  closed = false;
  notifyUpdated(uri: string): void {
    this.updates.push(uri);
  }
  close(): void {
    this.closed = true;
  }
}

const LIMITS: McpSessionLimits = {
  sessionsPerCredential: 2,
  sessions: 3,
  subscriptionsPerCredential: 2,
  idleMs: 1_000,
};

const table = () => {
  let now = 0;
  const sessions = new McpSessions(LIMITS, () => now);
  return { sessions, advance: (ms: number) => (now += ms) };
};

describe('McpSessions', () => {
  it('finds a session for its own credential only', () => {
    const { sessions } = table();
    const handle = new FakeSession();
    sessions.add('s1', keyOf('mk_a'), handle);
    expect(sessions.find('s1', keyOf('mk_a'))).toBe(handle);
    // Another key of the same account, an agent token, no credential, an unknown id: not found.
    expect(sessions.find('s1', keyOf('mk_b'))).toBeUndefined();
    expect(
      sessions.find('s1', {
        accountId: 1,
        role: 'buyer',
        credential: { kind: 'agent_token', sessionId: 'mk_a', apiKeyPrefix: 'mk_k' },
      }),
    ).toBeUndefined();
    expect(sessions.find('s1', undefined)).toBeUndefined();
    expect(sessions.find('s2', keyOf('mk_a'))).toBeUndefined();
  });

  it("ends a credential's least recently used session past its limit, and counts the replica's", () => {
    const { sessions, advance } = table();
    const [first, second, third] = [new FakeSession(), new FakeSession(), new FakeSession()];
    sessions.add('s1', keyOf('mk_a'), first);
    advance(10);
    sessions.add('s2', keyOf('mk_a'), second);
    advance(10);
    sessions.find('s1', keyOf('mk_a'));
    sessions.add('s3', keyOf('mk_a'), third);
    expect([first.closed, second.closed, third.closed]).toEqual([false, true, false]);
    expect(sessions.find('s2', keyOf('mk_a'))).toBeUndefined();
    expect(sessions.hasRoom()).toBe(true);
    sessions.add('s4', keyOf('mk_b'), new FakeSession());
    expect(sessions.size).toBe(3);
    expect(sessions.hasRoom()).toBe(false);
  });

  it("ends the sessions of a revoked key and of the agent tokens issued for it, and no one else's", () => {
    const { sessions } = table();
    const tokenOf = (sessionId: string, apiKeyPrefix: string): Principal => ({
      accountId: 1,
      role: 'buyer',
      credential: { kind: 'agent_token', sessionId, apiKeyPrefix },
    });
    const [byKey, byToken, byOtherKey] = [new FakeSession(), new FakeSession(), new FakeSession()];
    sessions.add('s1', keyOf('mk_a'), byKey);
    sessions.add('s2', tokenOf('t1', 'mk_a'), byToken);
    sessions.add('s3', keyOf('mk_b'), byOtherKey);
    sessions.subscribe('s1', 'marketplace://subscriptions/sub_1');

    expect(sessions.endKey('mk_a')).toBe(2);
    expect([byKey.closed, byToken.closed, byOtherKey.closed]).toEqual([true, true, false]);
    expect(sessions.find('s1', keyOf('mk_a'))).toBeUndefined();
    expect(sessions.notifyUpdated(['marketplace://subscriptions/sub_1'])).toBe(0);
    expect(sessions.endKey('mk_a')).toBe(0);
    expect(sessions.size).toBe(1);
  });

  it('notifies the sessions subscribed to a resource, once each, until they unsubscribe', () => {
    const { sessions } = table();
    const [mine, other] = [new FakeSession(), new FakeSession()];
    sessions.add('s1', keyOf('mk_a'), mine);
    sessions.add('s2', keyOf('mk_b'), other);
    sessions.subscribe('s1', 'marketplace://subscriptions/sub_1');
    sessions.subscribe('s1', 'marketplace://subscriptions/sub_1');
    sessions.subscribe('s2', 'marketplace://subscriptions/sub_2');
    expect(
      sessions.notifyUpdated(['marketplace://subscriptions/sub_1', 'marketplace://subscriptions/sub_3']),
    ).toBe(1);
    expect(mine.updates).toEqual(['marketplace://subscriptions/sub_1']);
    expect(other.updates).toEqual([]);
    sessions.unsubscribe('s1', 'marketplace://subscriptions/sub_1');
    sessions.unsubscribe('s1', 'marketplace://subscriptions/sub_9');
    expect(sessions.notifyUpdated(['marketplace://subscriptions/sub_1'])).toBe(0);
    expect(sessions.subscriptionsOf('s1')).toEqual([]);
  });

  it('bounds the subscriptions of a credential over all its sessions', () => {
    const { sessions } = table();
    sessions.add('s1', keyOf('mk_a'), new FakeSession());
    sessions.add('s2', keyOf('mk_a'), new FakeSession());
    sessions.subscribe('s1', 'marketplace://subscriptions/sub_1');
    sessions.subscribe('s2', 'marketplace://subscriptions/sub_2');
    expect(() => sessions.subscribe('s2', 'marketplace://subscriptions/sub_3')).toThrow(
      SubscriptionLimitError,
    );
    // A repeat is no new subscription; another credential has its own allowance.
    sessions.subscribe('s2', 'marketplace://subscriptions/sub_2');
    sessions.add('s3', keyOf('mk_b'), new FakeSession());
    sessions.subscribe('s3', 'marketplace://subscriptions/sub_3');
  });

  it('sweeps sessions idle for idleMs, not those with an open stream, and forgets their subscriptions', () => {
    const { sessions, advance } = table();
    const [idle, streaming] = [new FakeSession(), new FakeSession()];
    sessions.add('s1', keyOf('mk_a'), idle);
    sessions.add('s2', keyOf('mk_b'), streaming);
    sessions.subscribe('s1', 'marketplace://subscriptions/sub_1');
    sessions.streamOpened('s2');
    advance(999);
    expect(sessions.sweep()).toBe(0);
    advance(1);
    expect(sessions.sweep()).toBe(1);
    expect([idle.closed, streaming.closed]).toEqual([true, false]);
    expect(sessions.notifyUpdated(['marketplace://subscriptions/sub_1'])).toBe(0);
    sessions.streamClosed('s2');
    advance(1_000);
    expect(sessions.sweep()).toBe(1);
    expect(streaming.closed).toBe(true);
  });

  it('closes every session when the gateway stops', () => {
    const { sessions } = table();
    const handles = [new FakeSession(), new FakeSession()];
    handles.forEach((handle, index) => sessions.add(`s${index}`, keyOf(`mk_${index}`), handle));
    sessions.closeAll();
    expect(handles.map((handle) => handle.closed)).toEqual([true, true]);
    expect(sessions.size).toBe(0);
  });
});

describe('saved-search match events', () => {
  const message = (payload: subscriptionV1.SubscriptionEvent['payload'], type: string) => ({
    headers: { ce_type: `marketplace.subscription.v1.${type}` },
    value: subscriptionV1.SubscriptionEvent.encode({
      eventId: 'e1',
      subscriptionId: 'match_product_1',
      version: 1,
      occurredAtMs: 1,
      actor: undefined,
      correlationId: '',
      payload,
    }).finish(),
  });

  it('names the resources of the saved searches a listing matched, and nothing for other events', () => {
    expect(
      updatedResourcesOf(
        message(
          {
            $case: 'savedSearchesMatched',
            value: { productId: 'product_1', subscriptionIds: ['sub_1', 'sub_2'], matchedAtMs: 1 },
          },
          'SavedSearchesMatched',
        ),
      ),
    ).toEqual(['marketplace://subscriptions/sub_1', 'marketplace://subscriptions/sub_2']);
    expect(
      updatedResourcesOf(message({ $case: 'deleted', value: { deletedAtMs: 1 } }, 'SubscriptionDeleted')),
    ).toEqual([]);
  });
});
