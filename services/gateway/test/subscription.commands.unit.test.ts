import { describe, expect, it } from '@jest/globals';
import type { subscriptionV1 } from '@marketplace/proto';
import { SubscriptionCommands } from '../src/contexts/subscriptions/subscription.commands.js';
import type { SubscriptionClient } from '../src/contexts/subscriptions/subscription.client.js';
import type { Principal } from '../src/edge/account.js';
import { subscribeInputSchema } from '../src/contexts/subscriptions/subscription.schema.js';
import { violationsOf } from '../src/edge/schemas/validate.js';

const BUYER: Principal = {
  accountId: 42,
  role: 'buyer',
  credential: { kind: 'agent_token', sessionId: 's1', apiKeyPrefix: 'mk_k' },
};
const subscription: subscriptionV1.Subscription = {
  subscriptionId: 'sub_0123456789abcdef01234567',
  ownerAccountId: 42,
  query: { bulkDealsOnly: false, originalJson: '{"maxPrice":4000,"colour":"blue"}' },
  channels: [
    { kind: { $case: 'webhook', value: { url: 'https://agent.example/hook' } } },
    { kind: { $case: 'mcpResource', value: {} } },
  ],
  createdAtMs: Date.UTC(2026, 0, 1),
};

/** A client that records what it was asked and answers with `subscription`. */
const fakeClient = () => {
  const requests: unknown[] = [];
  const client: SubscriptionClient = {
    subscribe: async (request) => {
      requests.push(request);
      return { subscription, unsubscribeToken: 'token', webhookSecret: '' };
    },
    listSubscriptions: async () => [subscription],
    registerSellerWebhook: () => Promise.reject(new Error('not used here')),
    listSellerWebhooks: () => Promise.reject(new Error('not used here')),
    deleteSellerWebhook: () => Promise.reject(new Error('not used here')),
    confirmEmail: async (request) => {
      requests.push(request);
      return { mailbox: 'ada@example.com' };
    },
    deleteSubscription: async (request) => {
      requests.push(request);
    },
    getSubscriptionResource: async () => ({
      subscription,
      matches: [
        { productId: 'product_1', matchedAtMs: Date.UTC(2026, 0, 2), productJson: '{"id":"product_1"}' },
      ],
      deliveries: [
        {
          deliveryId: 'evt_1',
          channelType: 'webhook',
          target: 'https://agent.example/hook',
          productId: 'product_1',
          status: 'failed',
          attempts: 4,
          lastError: 'the receiver answered 500',
          createdAtMs: Date.UTC(2026, 0, 2),
          lastAttemptAtMs: Date.UTC(2026, 0, 2, 0, 0, 7),
          nextAttemptAtMs: 0,
          deliveredAtMs: 0,
        },
      ],
    }),
    rotateWebhookSecret: async (request) => {
      requests.push(request);
      return { webhookSecret: 'whsec_new', secretGeneration: 1, previousValidUntilMs: Date.UTC(2026, 0, 2) };
    },
    close: () => undefined,
  };
  return { client, requests };
};

describe('subscribe_to_query input', () => {
  it('keeps unknown query keys and names the bad field', () => {
    const parsed = subscribeInputSchema.parse({
      query: { maxPrice: 4_000, colour: 'blue' },
      channels: [{ type: 'mcp_resource' }],
    });
    expect(parsed.query).toEqual({ maxPrice: 4_000, colour: 'blue' });
    const pathsOf = (input: unknown) => {
      const result = subscribeInputSchema.safeParse(input);
      return result.success ? [] : violationsOf(result.error).map((violation) => violation.path);
    };
    expect(pathsOf({ query: { maxPrice: 'cheap' }, channels: [{ type: 'email', email: 'nope' }] })).toEqual([
      'query/maxPrice',
      'channels/0/email',
    ]);
    expect(pathsOf({ query: {}, channels: Array(6).fill({ type: 'mcp_resource' }) })).toEqual(['channels']);
  });
});

describe('SubscriptionCommands', () => {
  const base = 'https://market.example';

  it('subscribes as the caller, anonymous as owner 0, and shows the resource links to owners only', async () => {
    const { client, requests } = fakeClient();
    const commands = new SubscriptionCommands(client, base);
    const created = await commands.subscribe(
      BUYER,
      { query: { maxPrice: 4_000 }, channels: [{ type: 'mcp_resource' }] },
      'req-1',
    );
    expect(created).toMatchObject({
      id: subscription.subscriptionId,
      query: { maxPrice: 4_000, colour: 'blue' },
      resource_uri: `marketplace://subscriptions/${subscription.subscriptionId}`,
      resource_url: `${base}/api/mcp/resources/subscriptions/${subscription.subscriptionId}`,
      unsubscribe_token: 'token',
      webhook_secret: null,
    });
    await commands.subscribe(
      undefined,
      { query: {}, channels: [{ type: 'webhook', url: 'https://a.example/h' }] },
      'req-2',
    );
    expect(requests).toEqual([
      expect.objectContaining({ ownerAccountId: 42, actor: { kind: 'buyer', id: '42' } }),
      expect.objectContaining({ ownerAccountId: 0, actor: { kind: 'anonymous', id: '' } }),
    ]);
  });

  it('shows each email channel as pending confirmation or active, and confirms anonymously', async () => {
    const { client, requests } = fakeClient();
    const withEmails: subscriptionV1.Subscription = {
      ...subscription,
      channels: [
        { kind: { $case: 'email', value: { email: 'ada+x@example.com', pendingConfirmation: true } } },
        { kind: { $case: 'email', value: { email: 'bob@example.com', pendingConfirmation: false } } },
      ],
    };
    client.listSubscriptions = async () => [withEmails];
    const commands = new SubscriptionCommands(client, base);
    expect((await commands.list(BUYER)).subscriptions[0]?.channels).toEqual([
      { type: 'email', email: 'ada+x@example.com', status: 'pending_confirmation' },
      { type: 'email', email: 'bob@example.com', status: 'active' },
    ]);
    expect(await commands.confirmEmail('the-token', 'req-3')).toEqual({
      confirmed: true,
      mailbox: 'ada@example.com',
    });
    expect(requests).toEqual([
      { actor: { kind: 'anonymous', id: '' }, token: 'the-token', correlationId: 'req-3' },
    ]);
  });

  it('rotates a secret as the caller, or anonymously with the secret held; neither is 401', async () => {
    const { client, requests } = fakeClient();
    const commands = new SubscriptionCommands(client, base);
    const id = subscription.subscriptionId;
    await expect(commands.rotateSecret(undefined, id, undefined, 'r')).rejects.toMatchObject({
      kind: 'unauthenticated',
    });
    expect(await commands.rotateSecret(BUYER, id, undefined, 'r1')).toEqual({
      id,
      webhook_secret: 'whsec_new',
      secret_generation: 1,
      previous_secret_valid_until: '2026-01-02T00:00:00.000Z',
    });
    await commands.rotateSecret(undefined, id, 'whsec_old', 'r2');
    expect(requests).toEqual([
      {
        actor: { kind: 'buyer', id: '42' },
        subscriptionId: id,
        ownerAccountId: 42,
        currentSecret: '',
        correlationId: 'r1',
      },
      {
        actor: { kind: 'anonymous', id: '' },
        subscriptionId: id,
        ownerAccountId: 0,
        currentSecret: 'whsec_old',
        correlationId: 'r2',
      },
    ]);
  });

  it('answers 401 to anonymous readers and renders delivery failures', async () => {
    const commands = new SubscriptionCommands(fakeClient().client, base);
    await expect(commands.resource(undefined, subscription.subscriptionId)).rejects.toMatchObject({
      kind: 'unauthenticated',
    });
    await expect(commands.list(undefined)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(
      commands.delete(undefined, subscription.subscriptionId, undefined, 'r'),
    ).rejects.toMatchObject({
      kind: 'unauthenticated',
    });
    const resource = await commands.resource(BUYER, subscription.subscriptionId);
    expect(resource.matches).toEqual([
      { matched_at: '2026-01-02T00:00:00.000Z', product: { id: 'product_1' } },
    ]);
    expect(resource.deliveries[0]).toEqual({
      id: 'evt_1',
      channel: 'webhook',
      target: 'https://agent.example/hook',
      product_id: 'product_1',
      status: 'failed',
      attempts: 4,
      last_error: 'the receiver answered 500',
      created_at: '2026-01-02T00:00:00.000Z',
      last_attempt_at: '2026-01-02T00:00:07.000Z',
      next_attempt_at: null,
      delivered_at: null,
    });
  });
});
