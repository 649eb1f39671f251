import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import { createPostgresEventStore } from '@marketplace/eventsourcing';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAddressPolicy, createGuardedFetcher, type GuardedFetcher } from '@marketplace/outbound-http';
import {
  createLogger,
  ephemeralSigningKey,
  ManualClock,
  systemClock,
  verifiesRequestSignature,
  type Clock,
} from '@marketplace/platform';
import { OutgoingMailTable } from '@marketplace/outgoing-mail';
import { ConfirmedMailboxesTable } from '../src/adapters/confirmed-mailboxes.table.js';
import { DeliveriesTable } from '../src/adapters/deliveries.table.js';
import { createDeliverySender } from '../src/adapters/delivery.senders.js';
import { MatchingTables } from '../src/adapters/matching.tables.js';
import { subscriptionMigrations } from '../src/adapters/subscription.migrations.js';
import { SubscriptionsTable } from '../src/adapters/subscriptions.table.js';
import {
  startDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
} from '../src/application/delivery-worker.js';
import { matchNewListings } from '../src/application/match-listing.js';
import {
  listSubscriptions,
  rotateWebhookSecret,
  subscribe,
  subscriptionResource,
  unsubscribe,
  type SubscriptionDependencies,
} from '../src/application/subscriptions.js';
import { webhookSecretOf } from '../src/domain/webhook-signature.js';
import { confirmEmail, unconfirmedMailboxesOf } from '../src/application/email-confirmation.js';
import { EMAIL_CONFIRMATION_TTL_MS } from '../src/domain/email-confirmation.js';
import { newListing, RecordingMailer, WebhookReceiver, type ReceivedWebhook } from './support.js';

const logger = createLogger({ service: 'subscription-test', level: 'silent' });
const SECRET = 'test-signing-secret-0123456789abcdef';
/** The marketplace signing key, whose JWK the gateway's /.well-known/ucp would publish. */
const SIGNING_KEY = ephemeralSigningKey();

/** A UCP receiver's check of the RFC 9421 signature with the published JWK (docs/agents.md, "Signing key"). */
const verifiesWithMarketplaceKey = (delivery: ReceivedWebhook): boolean =>
  verifiesRequestSignature(delivery, SIGNING_KEY.jwk);
const START = Date.UTC(2026, 0, 1);
const BUYER = 42;
const actor = { kind: 'buyer', id: String(BUYER) } as const;
/** The local receivers' address, allowed as OUTBOUND_ALLOW_HOSTS allows it in the e2e suites. */
const LOOPBACK_RECEIVERS = { hosts: ['127.0.0.1'], cidrs: ['127.0.0.1/32'] };

/**
 * An independent verifier, written from the documented scheme only (docs/specification.md, "Saved searches"), as a
 * receiver would: parse `t=...,v1=...[,v1=...]`, HMAC-SHA256 over "<t>.<raw body>", constant-time compare, and
 * accept if any `v1` entry verifies (during a secret rotation there are two).
 */
const verifySignature = (header: string | undefined, rawBody: string, secret: string): boolean => {
  const parts = (header ?? '').split(',').map((part) => part.split('=', 2) as [string, string]);
  const timestamp = parts.find(([name]) => name === 't')?.[1];
  const signatures = parts.filter(([name]) => name === 'v1').map(([, value]) => value);
  if (!timestamp || signatures.length === 0) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  return signatures.some((signature) => {
    const presented = Buffer.from(signature, 'hex');
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
};

describe.each(testEngines())('saved searches on $name', ({ create, name }) => {
  let db: Database;
  let schema: string;
  let clock: ManualClock;
  let deps: SubscriptionDependencies;
  let fetcher: GuardedFetcher;
  let mailer: RecordingMailer;
  const receivers: WebhookReceiver[] = [];
  const workers: DeliveryWorker[] = [];

  const match = (listing = newListing(), now = clock.now()) =>
    db.transaction((tx) =>
      matchNewListings({ ...deps, publicBaseUrl: 'https://market.example' }, tx, [listing], now),
    );

  const worker = (
    workerClock: Clock,
    workerFetcher = fetcher,
    overrides: Partial<Pick<DeliveryWorkerOptions, 'deliveries' | 'pollMs'>> = {},
  ) => {
    const started = startDeliveryWorker({
      db,
      deliveries: overrides.deliveries ?? deps.deliveries,
      ...(overrides.pollMs === undefined ? {} : { pollMs: overrides.pollMs }),
      clock: workerClock,
      logger,
      // On the virtual clock the test drives processDue() itself; a background loop would race it.
      runLoop: workerClock === systemClock,
      send: createDeliverySender({
        fetcher: workerFetcher,
        mailer,
        signingSecret: SECRET,
        signingKey: SIGNING_KEY,
        webhookSecretOf: (subscriptionId) => deps.subscriptions.webhookSecretOf(db, subscriptionId),
        clock: workerClock,
        publicBaseUrl: 'https://market.example',
      }),
    });
    workers.push(started);
    return started;
  };

  const receiver = async (statuses: number[] = [], now?: () => number) => {
    const started = await WebhookReceiver.start(statuses, now);
    receivers.push(started);
    return started;
  };

  /** The example: electronics, customer returns, under $40 a unit, at least 500 units. */
  const subscribeExample = (channels: unknown[], ownerAccountId: number | null = BUYER) =>
    subscribe(deps, {
      ...(ownerAccountId === null ? {} : { ownerAccountId }),
      actor,
      draft: {
        query: {
          category: 'electronics',
          condition: 'customer_returns',
          maxPrice: 4_000,
          minQuantity: 500,
          search: 'earbuds',
          preferredCarrier: 'ups',
        },
        channels,
      },
    });

  beforeAll(async () => {
    db = await create();
    fetcher = createGuardedFetcher({ allowList: LOOPBACK_RECEIVERS });
  });
  afterAll(async () => {
    await fetcher.close();
    await db.close();
  });
  beforeEach(async () => {
    schema = freshSchemaName('subscription');
    await migrate(db, schema, subscriptionMigrations);
    clock = new ManualClock(START);
    mailer = new RecordingMailer();
    deps = {
      db,
      clock,
      store: createPostgresEventStore({ db, schema }),
      subscriptions: new SubscriptionsTable(schema),
      matching: new MatchingTables(schema),
      deliveries: new DeliveriesTable(schema),
      signingSecret: SECRET,
      webhookAddresses: createAddressPolicy(LOOPBACK_RECEIVERS),
      mailboxes: new ConfirmedMailboxesTable(schema),
      outgoingMail: new OutgoingMailTable(schema),
      publicBaseUrl: 'https://market.example',
    };
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((started) => started.stop()));
    await Promise.all(receivers.splice(0).map((started) => started.close()));
    await dropSchema(db, schema);
  });

  it('keeps a subscription for its owner only, unknown query keys included', async () => {
    const { subscription } = await subscribeExample([{ type: 'mcp_resource' }]);
    expect(subscription.subscriptionId).toMatch(/^sub_[0-9a-f]{24}$/);
    expect(subscription.query.original).toMatchObject({ preferredCarrier: 'ups' });
    expect((await listSubscriptions(deps, BUYER)).map((s) => s.subscriptionId)).toEqual([
      subscription.subscriptionId,
    ]);
    expect(await listSubscriptions(deps, BUYER + 1)).toEqual([]);
    await expect(subscriptionResource(deps, subscription.subscriptionId, BUYER + 1)).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(
      unsubscribe(deps, {
        subscriptionId: subscription.subscriptionId,
        requesterAccountId: BUYER + 1,
        actor,
      }),
    ).rejects.toMatchObject({ kind: 'not_found' });
    await unsubscribe(deps, {
      subscriptionId: subscription.subscriptionId,
      requesterAccountId: BUYER,
      actor,
    });
    expect(await listSubscriptions(deps, BUYER)).toEqual([]);
  });

  it('lets an anonymous caller subscribe with webhook and email only, and end it with the token', async () => {
    const refused = await subscribeExample([{ type: 'mcp_resource' }], null).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      kind: 'validation',
      violations: [{ path: 'channels/0/type', message: expect.any(String) }],
    });
    const { subscription, unsubscribeToken } = await subscribeExample(
      [{ type: 'email', email: 'agent@example.com' }],
      null,
    );
    const id = subscription.subscriptionId;
    await expect(
      unsubscribe(deps, { subscriptionId: id, unsubscribeToken: 'forged', actor }),
    ).rejects.toMatchObject({
      kind: 'not_found',
    });
    await unsubscribe(deps, { subscriptionId: id, unsubscribeToken, actor });
    expect(await match()).toBe(0);
  });

  /** The confirmation emails queued so far (claimed, so each is read once), with their links' tokens. */
  const confirmationMails = async () =>
    (await new OutgoingMailTable(schema).claimDue(db, clock.now(), 100, 60_000)).map(({ message }) => ({
      to: message.to,
      text: message.text,
      token: decodeURIComponent(/\/api\/email-confirmation\?token=(\S+)/.exec(message.text)?.[1] ?? ''),
    }));

  /** Confirms an address with the link of the confirmation email just queued for it. */
  const confirmAddress = async (email: string) => {
    const mail = (await confirmationMails()).find((one) => one.to === email);
    if (!mail) throw new Error(`no confirmation email to ${email}`);
    return confirmEmail(deps, { token: mail.token, actor });
  };

  describe('double opt-in of email channels', () => {
    it('emails matches to an address only after its owner confirmed it, with one email for the request', async () => {
      const { subscription } = await subscribeExample([
        { type: 'email', email: 'Agent+deals@Example.com' },
        { type: 'mcp_resource' },
      ]);
      // A second saved search naming the same mailbox while the link is out sends no second email.
      await subscribeExample([{ type: 'email', email: 'agent@example.com' }]);
      const mails = await confirmationMails();
      expect(mails).toEqual([
        expect.objectContaining({ to: 'Agent+deals@Example.com', token: expect.stringMatching(/\./) }),
      ]);
      expect(mails[0]?.text).toContain('https://market.example/api/email-confirmation?token=');
      expect(await unconfirmedMailboxesOf(deps, [subscription])).toEqual(new Set(['agent@example.com']));

      // A match before the confirmation: the resource has it, the unconfirmed mailbox gets nothing.
      expect(await match(newListing({ productId: 'product_early' }))).toBe(0);
      await worker(clock).processDue();
      expect(mailer.sent).toEqual([]);
      expect((await subscriptionResource(deps, subscription.subscriptionId, BUYER)).matches).toHaveLength(1);

      expect(await confirmEmail(deps, { token: mails[0]?.token ?? '', actor })).toBe('agent@example.com');
      expect(await unconfirmedMailboxesOf(deps, [subscription])).toEqual(new Set());
      // Confirmed for both saved searches, and for later ones: no new confirmation email.
      await subscribeExample([{ type: 'email', email: 'AGENT+other@example.com' }]);
      expect(await confirmationMails()).toEqual([]);
      expect(await match(newListing({ productId: 'product_late' }))).toBe(3);
      await worker(clock).processDue();
      expect(mailer.sent.map((mail) => mail.to).sort()).toEqual([
        'AGENT+other@example.com',
        'Agent+deals@Example.com',
        'agent@example.com',
      ]);
    });

    it('refuses a forged, an expired or a used confirmation token, and one address’s does not confirm another', async () => {
      const { subscription } = await subscribeExample([
        { type: 'email', email: 'first@example.com' },
        { type: 'webhook', url: 'https://hooks.example/a' },
      ]);
      await subscribeExample([{ type: 'email', email: 'second@example.com' }]);
      const [first, second] = await confirmationMails();
      if (!first || !second) throw new Error('two confirmation emails expected');
      const onToken = { kind: 'validation', violations: [{ path: 'token', message: expect.any(String) }] };
      // Forged: another mailbox under the first link's signature, a changed signature, garbage.
      const [payload, signature] = first.token.split('.');
      const otherPayload = Buffer.from(JSON.stringify(['second@example.com', 'x'])).toString('base64url');
      for (const forged of [
        `${otherPayload}.${signature ?? ''}`,
        `${payload ?? ''}.${(signature ?? '').slice(0, -2)}AA`,
        'not-a-token',
        `${payload ?? ''}.${signature ?? ''}.extra`,
      ]) {
        await expect(confirmEmail(deps, { token: forged, actor })).rejects.toMatchObject(onToken);
      }
      // Expired: past 7 days, the second link no longer works.
      clock.advance(EMAIL_CONFIRMATION_TTL_MS);
      await expect(confirmEmail(deps, { token: second.token, actor })).rejects.toMatchObject({
        ...onToken,
        violations: [{ path: 'token', message: expect.stringContaining('expired') }],
      });
      clock.advance(-EMAIL_CONFIRMATION_TTL_MS);
      await confirmEmail(deps, { token: first.token, actor });
      // Replayed: single use.
      await expect(confirmEmail(deps, { token: first.token, actor })).rejects.toMatchObject({
        kind: 'conflict',
      });
      // The first address confirmed does not confirm the second.
      const second2 = await subscribeExample([{ type: 'email', email: 'second@example.com' }]);
      expect(await unconfirmedMailboxesOf(deps, [subscription, second2.subscription])).toEqual(
        new Set(['second@example.com']),
      );
    });

    it('confirms once when the link is used twice at the same time: the other use is a conflict', async () => {
      await subscribeExample([{ type: 'email', email: 'race@example.com' }]);
      const [mail] = await confirmationMails();
      const outcomes = await Promise.allSettled([
        confirmEmail(deps, { token: mail?.token ?? '', actor }),
        confirmEmail(deps, { token: mail?.token ?? '', actor }),
      ]);
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(outcomes.find((outcome) => outcome.status === 'rejected')).toMatchObject({
        reason: { kind: 'conflict' },
      });
      expect(await deps.mailboxes.confirmedAmong(db, ['race@example.com'])).toEqual(
        new Set(['race@example.com']),
      );
    });
  });

  it("looks a batch's listings up in the match index in one statement, and matches each as alone", async () => {
    const hook = await receiver();
    await subscribeExample([{ type: 'webhook', url: hook.url }]);
    const lookups: string[] = [];
    const enqueued = await db.transaction((tx) => {
      const query = tx.query.bind(tx);
      tx.query = (sql, params) => {
        if (sql.includes('category_key')) lookups.push(sql);
        return query(sql, params);
      };
      return matchNewListings(
        { ...deps, publicBaseUrl: 'https://market.example' },
        tx,
        [
          newListing({ productId: 'product_11' }),
          newListing({ productId: 'product_12', priceCents: 4_500 }),
          newListing({ productId: 'product_13', promotePublicly: false }),
          newListing({ productId: 'product_14' }),
        ],
        clock.now(),
      );
    });
    expect(lookups).toHaveLength(1);
    expect(enqueued).toBe(2);
    await worker(clock).processDue();
    expect(
      hook.received
        .map(({ body }) => (body.includes(`"product_11"`) ? 11 : body.includes(`"product_14"`) ? 14 : 0))
        .sort(),
    ).toEqual([11, 14]);
  });

  it('matches a new promoted listing once, however often its event is redelivered', async () => {
    const hook = await receiver();
    await subscribeExample([{ type: 'email', email: 'agent@example.com' }]);
    await confirmAddress('agent@example.com');
    const { subscription } = await subscribeExample([
      { type: 'webhook', url: hook.url },
      { type: 'email', email: 'agent@example.com' },
      { type: 'mcp_resource' },
    ]);
    expect(await match(newListing({ productId: 'product_2', priceCents: 4_500 }))).toBe(0);
    expect(await match(newListing({ productId: 'product_3', quantity: 100 }))).toBe(0);
    expect(
      await match(newListing({ productId: 'product_4', title: 'Headphones', description: 'Over-ear' })),
    ).toBe(0);
    expect(await match(newListing({ productId: 'product_5', promotePublicly: false }))).toBe(0);
    expect(await match()).toBe(3);
    expect(await match()).toBe(0);

    await worker(clock).processDue();
    expect(hook.received).toHaveLength(1);
    expect(mailer.sent).toHaveLength(2);
    expect(mailer.sent[0]?.text).toContain('/unsubscribe?token=');
    const resource = await subscriptionResource(deps, subscription.subscriptionId, BUYER);
    expect(resource.matches.map((m) => m.productId)).toEqual(['product_1']);
    // The resource that gained the listing is named in one event, for the gateway's MCP sessions; the
    // redelivery appended nothing, and neither did the listings no resource gained.
    const matched = await deps.store.readStream('match_product_1');
    expect(matched.events.map((event) => [event.type, event.data])).toEqual([
      [
        'SavedSearchesMatched',
        { productId: 'product_1', subscriptionIds: [subscription.subscriptionId], matchedAt: clock.now() },
      ],
    ]);
    expect((await deps.store.readStream('match_product_2')).version).toBe(0);
    expect(resource.deliveries.map((d) => [d.channelType, d.status, d.attempts])).toEqual(
      expect.arrayContaining([
        ['webhook', 'delivered', 1],
        ['email', 'delivered', 1],
      ]),
    );
  });

  it('signs webhooks with the subscription’s own secret so an independent verifier accepts them, and nothing else', async () => {
    const hook = await receiver();
    const { subscription, webhookSecret } = await subscribeExample([{ type: 'webhook', url: hook.url }]);
    // Another subscriber knows its own secret only: it cannot sign deliveries as this subscription's.
    const other = await subscribeExample([{ type: 'webhook', url: `${hook.url}/other` }]);
    expect(webhookSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(other.webhookSecret).not.toBe(webhookSecret);
    await match();
    await worker(clock).processDue();
    const delivery = hook.received.find(({ body }) => body.includes(subscription.subscriptionId));
    if (!delivery || !webhookSecret || !other.webhookSecret) throw new Error('no webhook arrived');
    const signature = delivery.headers['x-marketplace-signature'] as string;
    expect(verifySignature(signature, delivery.body, webhookSecret)).toBe(true);
    expect(verifySignature(signature, delivery.body, other.webhookSecret)).toBe(false);
    // The marketplace's key signs unsubscribe tokens only: it is no webhook secret.
    expect(verifySignature(signature, delivery.body, SECRET)).toBe(false);
    expect(verifySignature(signature, delivery.body.replace('3500', '3400'), webhookSecret)).toBe(false);
    expect(signature).toMatch(new RegExp(`^t=${Math.floor(START / 1000)},v1=[0-9a-f]{64}$`));
    expect(delivery.headers['x-marketplace-event']).toBe('saved_search.match');
    // And the marketplace key's RFC 9421 signature, as UCP asks of webhooks: our profile named in UCP-Agent.
    expect(delivery.headers['ucp-agent']).toBe('profile="https://market.example/.well-known/ucp"');
    expect(delivery.headers['signature-input']).toBe(
      `sig1=("@method" "@authority" "@path" "ucp-agent" "content-digest" "content-type");created=${Math.floor(START / 1000)};keyid="${SIGNING_KEY.jwk.kid}"`,
    );
    expect(verifiesWithMarketplaceKey(delivery)).toBe(true);
    expect(verifiesWithMarketplaceKey({ ...delivery, body: delivery.body.replace('3500', '3400') })).toBe(
      false,
    );
    expect(verifiesWithMarketplaceKey({ ...delivery, path: `${delivery.path}/elsewhere` })).toBe(false);
    const body = JSON.parse(delivery.body) as Record<string, unknown>;
    // The notification event's id: a UUIDv7, like every event id.
    expect(body['id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body).toEqual({
      id: delivery.headers['x-marketplace-delivery'],
      type: 'saved_search.match',
      created_at: new Date(START).toISOString(),
      data: {
        subscription_id: subscription.subscriptionId,
        query: expect.objectContaining({ maxPrice: 4_000, preferredCarrier: 'ups' }),
        product: expect.objectContaining({ id: 'product_1', price: 3_500, quantity_available: 600 }),
      },
    });
  });

  it('rotates the webhook secret: both signatures verify for 24 h, then only the new one; nobody else may rotate', async () => {
    const hook = await receiver();
    const { subscription, webhookSecret: first } = await subscribeExample([
      { type: 'webhook', url: hook.url },
    ]);
    const id = subscription.subscriptionId;
    const forged = [
      { requesterAccountId: BUYER + 1 },
      { currentSecret: 'whsec_forged' },
      { requesterAccountId: BUYER + 1, currentSecret: webhookSecretOf(SECRET, id, 1) },
      // Another subscription's secret proves nothing about this one.
      // (Its own receiver: its deliveries of the same listings must not be taken for this one's.)
      {
        currentSecret: (await subscribeExample([{ type: 'webhook', url: (await receiver()).url }]))
          .webhookSecret,
      },
    ];
    for (const attempt of forged) {
      await expect(
        rotateWebhookSecret(deps, { subscriptionId: id, actor, ...attempt }),
      ).rejects.toMatchObject({
        kind: 'not_found',
      });
    }
    const rotated = await rotateWebhookSecret(deps, { subscriptionId: id, requesterAccountId: BUYER, actor });
    expect(rotated).toEqual({
      webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      generation: 1,
      previousValidUntil: START + 24 * 3_600_000,
    });
    if (!first) throw new Error('no secret at creation');
    expect(rotated.webhookSecret).not.toBe(first);

    const deliveredSignature = async (productId: string) => {
      await match(newListing({ productId }));
      await worker(clock).processDue();
      const delivery = hook.received.find(({ body }) => body.includes(`"${productId}"`));
      if (!delivery) throw new Error(`no webhook for ${productId}`);
      return { signature: delivery.headers['x-marketplace-signature'] as string, body: delivery.body };
    };
    // During the overlap: one header, both entries; a receiver holding either secret verifies.
    clock.set(START + 24 * 3_600_000 - 1_000);
    const during = await deliveredSignature('product_10');
    expect(during.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifySignature(during.signature, during.body, rotated.webhookSecret)).toBe(true);
    expect(verifySignature(during.signature, during.body, first)).toBe(true);
    // After it: the new secret only.
    clock.set(START + 24 * 3_600_000);
    const after = await deliveredSignature('product_11');
    expect(after.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(after.signature, after.body, rotated.webhookSecret)).toBe(true);
    expect(verifySignature(after.signature, after.body, first)).toBe(false);
  });

  it('lets an anonymous subscription rotate with a secret that still signs, and not with a rotated-out one', async () => {
    const hook = await receiver();
    const {
      subscription,
      webhookSecret: first,
      unsubscribeToken,
    } = await subscribeExample([{ type: 'webhook', url: hook.url }], null);
    const id = subscription.subscriptionId;
    const anonymous = { kind: 'anonymous', id: '' } as const;
    const second = await rotateWebhookSecret(deps, {
      subscriptionId: id,
      currentSecret: first,
      actor: anonymous,
    });
    // The previous secret still signs for 24 h, so it may rotate again (and the one before that is then out).
    const third = await rotateWebhookSecret(deps, {
      subscriptionId: id,
      currentSecret: first,
      actor: anonymous,
    });
    expect(third.generation).toBe(2);
    await expect(
      rotateWebhookSecret(deps, { subscriptionId: id, currentSecret: first, actor: anonymous }),
    ).rejects.toMatchObject({ kind: 'not_found' });
    clock.set(third.previousValidUntil);
    await expect(
      rotateWebhookSecret(deps, {
        subscriptionId: id,
        currentSecret: second.webhookSecret,
        actor: anonymous,
      }),
    ).rejects.toMatchObject({ kind: 'not_found' });
    const fourth = await rotateWebhookSecret(deps, {
      subscriptionId: id,
      currentSecret: third.webhookSecret,
      actor: anonymous,
    });
    expect(fourth.generation).toBe(3);
    // No webhook channel, no secret to rotate; a deleted subscription is gone.
    const { subscription: resourceOnly } = await subscribeExample([{ type: 'mcp_resource' }]);
    await expect(
      rotateWebhookSecret(deps, {
        subscriptionId: resourceOnly.subscriptionId,
        requesterAccountId: BUYER,
        actor,
      }),
    ).rejects.toMatchObject({ kind: 'conflict' });
    await unsubscribe(deps, { subscriptionId: id, unsubscribeToken, actor: anonymous });
    await expect(
      rotateWebhookSecret(deps, {
        subscriptionId: id,
        currentSecret: fourth.webhookSecret,
        actor: anonymous,
      }),
    ).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('decides racing rotations and a deletion of one subscription each on the state the other left', async () => {
    const { subscription } = await subscribeExample([{ type: 'webhook', url: 'http://127.0.0.1:9/hook' }]);
    const subscriptionId = subscription.subscriptionId;
    const owner = { subscriptionId, requesterAccountId: BUYER, actor };
    const outcomes = await Promise.all(
      [...Array.from({ length: 3 }, () => rotateWebhookSecret(deps, owner)), unsubscribe(deps, owner)].map(
        (work) =>
          work.then(
            () => 'ok',
            (error: unknown): string => (error as { kind?: string }).kind ?? String(error),
          ),
      ),
    );
    // Every answer is a success or a 404 (rotating what the deletion ended): never an internal error.
    expect(outcomes.every((outcome) => outcome === 'ok' || outcome === 'not_found')).toBe(true);
    expect(outcomes[3]).toBe('ok');
    const { rows } = await db.query<{ type: string }>(
      `select type from "${schema}".events where stream_id = $1 order by version`,
      [subscriptionId],
    );
    expect(rows.at(-1)?.type).toBe('SubscriptionDeleted');
    expect(rows.filter(({ type }) => type === 'WebhookSecretRotated')).toHaveLength(
      outcomes.slice(0, 3).filter((outcome) => outcome === 'ok').length,
    );
  });

  it('retries a receiver that fails twice after 1 s then 2 s, with the same delivery id (virtual clock)', async () => {
    const hook = await receiver([503, 429], () => clock.now());
    await subscribeExample([{ type: 'webhook', url: hook.url }]);
    await match();
    const delivering = worker(clock);
    for (let step = 0; step < 20 && hook.received.length < 3; step++) {
      await delivering.processDue();
      const due = await deps.deliveries.nextDueAt(db);
      if (due !== undefined) clock.set(Math.max(clock.now(), due));
    }
    await delivering.processDue();
    expect(hook.received).toHaveLength(3);
    expect(new Set(hook.received.map((r) => r.headers['x-marketplace-delivery'])).size).toBe(1);
    const [first, second, third] = hook.received.map((r) => r.at);
    expect([second! - first!, third! - second!]).toEqual([1_000, 2_000]);
    const [delivery] = await deps.deliveries.recent(
      db,
      (await listSubscriptions(deps, BUYER))[0]!.subscriptionId,
    );
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 3 });
  });

  it('gives up after 3 retries and shows the failure on the resource', async () => {
    const hook = await receiver([500, 500, 500, 500, 500]);
    const { subscription } = await subscribeExample([{ type: 'webhook', url: hook.url }]);
    await match();
    const delivering = worker(clock);
    for (let step = 0; step < 10; step++) {
      await delivering.processDue();
      const due = await deps.deliveries.nextDueAt(db);
      if (due === undefined) break;
      clock.set(due);
    }
    expect(hook.received).toHaveLength(4);
    const { deliveries } = await subscriptionResource(deps, subscription.subscriptionId, BUYER);
    expect(deliveries[0]).toMatchObject({
      status: 'failed',
      attempts: 4,
      lastError: 'the receiver answered 500',
    });
  });

  it('refuses a webhook to a non-public address when subscribing, naming the channel, and stores nothing', async () => {
    const refused = await subscribeExample([
      { type: 'webhook', url: 'http://169.254.169.254/latest/meta-data' },
      { type: 'email', email: 'agent@example.com' },
      { type: 'webhook', url: 'http://[::ffff:10.0.0.1]:8080/hook' },
      { type: 'webhook', url: 'http://2130706434/hook' }, // 127.0.0.2, not the allow-listed 127.0.0.1
    ]).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      kind: 'validation',
      violations: ['channels/0/url', 'channels/2/url', 'channels/3/url'].map((path) => ({
        path,
        message: expect.stringContaining('non-public'),
      })),
    });
    expect(await listSubscriptions(deps, BUYER)).toEqual([]);
  });

  it('refuses at delivery a name that resolves to a non-public address: nothing sent, not retried', async () => {
    const hook = await receiver();
    // Without the allow-list, as in production: localhost is a name, so only its resolution can refuse it.
    const publicOnly = createGuardedFetcher({});
    try {
      const { subscription } = await subscribeExample([
        { type: 'webhook', url: hook.url.replace('127.0.0.1', 'localhost') },
      ]);
      await match();
      await worker(clock, publicOnly).processDue();
      expect(hook.received).toEqual([]);
      const { deliveries } = await subscriptionResource(deps, subscription.subscriptionId, BUYER);
      expect(deliveries[0]).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastError: expect.stringMatching(/^forbidden_address/),
      });
      expect(await deps.deliveries.nextDueAt(db)).toBeUndefined();
    } finally {
      await publicOnly.close();
    }
  });

  it('reads only the status of a webhook answer: a redirect is not followed, and is a final failure', async () => {
    const target = await receiver();
    // An allowed receiver that redirects elsewhere, as an attacker's endpoint would to reach a private address.
    const redirector = createServer((_req, res) => res.writeHead(307, { location: target.url }).end());
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = redirector.address() as AddressInfo;
      const { subscription } = await subscribeExample([
        { type: 'webhook', url: `http://127.0.0.1:${port}/hook` },
      ]);
      await match();
      await worker(clock).processDue();
      expect(target.received).toEqual([]);
      const { deliveries } = await subscriptionResource(deps, subscription.subscriptionId, BUYER);
      expect(deliveries[0]).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastError: 'the receiver answered 307',
      });
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });

  // Real time, on one engine only: the background loop's own wake-ups.
  if (name === 'postgres')
    it('keeps a wake-up that came while the loop was looking at the queue, rather than waiting for the poll', async () => {
      const hook = await receiver();
      deps = { ...deps, clock: systemClock };
      await subscribe(deps, {
        ownerAccountId: BUYER,
        actor,
        draft: { query: {}, channels: [{ type: 'webhook', url: hook.url }] },
      });
      // The loop's first look for the next due row is held until a delivery was enqueued and the worker woken:
      // that wake-up comes while the loop is busy, before it sleeps.
      const asked = Promise.withResolvers<void>();
      const release = Promise.withResolvers<void>();
      let held = false;
      const real = deps.deliveries;
      const deliveries: DeliveryWorkerOptions['deliveries'] = Object.assign(
        Object.create(real) as typeof real,
        {
          nextDueAt: async (queryable: Database) => {
            const due = await real.nextDueAt(queryable);
            if (!held) {
              held = true;
              asked.resolve();
              await release.promise;
            }
            return due;
          },
        },
      );
      const started = worker(systemClock, fetcher, { deliveries, pollMs: 60_000 });
      await asked.promise;
      await match(newListing({ createdAt: Date.now() }), Date.now());
      started.wake();
      release.resolve();
      const deadline = Date.now() + 10_000;
      while (hook.received.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(hook.received).toHaveLength(1);
    }, 15_000);

  // Real time, on one engine only (3 s): the background loop itself keeps the schedule.
  if (name === 'postgres')
    it('keeps the 1 s, 2 s schedule in real time (±20%)', async () => {
      const hook = await receiver([502, 503]);
      deps = { ...deps, clock: systemClock };
      await subscribe(deps, {
        ownerAccountId: BUYER,
        actor,
        draft: { query: {}, channels: [{ type: 'webhook', url: hook.url }] },
      });
      await match(newListing({ createdAt: Date.now() }), Date.now());
      worker(systemClock).wake();
      const deadline = Date.now() + 8_000;
      while (hook.received.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const [first, second, third] = hook.received.map((r) => r.at);
      expect(hook.received).toHaveLength(3);
      expect(second! - first!).toBeGreaterThanOrEqual(800);
      expect(second! - first!).toBeLessThanOrEqual(1_200);
      expect(third! - second!).toBeGreaterThanOrEqual(1_600);
      expect(third! - second!).toBeLessThanOrEqual(2_400);
    }, 15_000);
});
