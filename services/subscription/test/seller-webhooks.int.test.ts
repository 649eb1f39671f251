import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import { createAddressPolicy, createGuardedFetcher, type GuardedFetcher } from '@marketplace/outbound-http';
import { createLogger, ephemeralSigningKey, ManualClock } from '@marketplace/platform';
import { DeliveriesTable } from '../src/adapters/deliveries.table.js';
import { createDeliverySender } from '../src/adapters/delivery.senders.js';
import { SellerWebhooksTable } from '../src/adapters/seller-webhooks.table.js';
import { subscriptionMigrations } from '../src/adapters/subscription.migrations.js';
import { startDeliveryWorker, type DeliveryWorker } from '../src/application/delivery-worker.js';
import {
  deleteSellerWebhook,
  listSellerWebhooks,
  queueSellerEvents,
  registerSellerWebhook,
  SELLER_WEBHOOKS_MAX,
  type SellerWebhookDependencies,
} from '../src/application/seller-webhooks.js';
import { RecordingMailer, WebhookReceiver } from './support.js';
import type { SellerEvent } from '../src/application/ports.js';

const logger = createLogger({ service: 'seller-webhooks-test', level: 'silent' });
const SECRET = 'test-signing-secret-0123456789abcdef';
const START = Date.UTC(2026, 0, 1);
const SELLER = 7;
const OTHER_SELLER = 8;
const LOOPBACK = { hosts: ['127.0.0.1'], cidrs: ['127.0.0.1/32'] };

/** A receiver's check, from the documented scheme only (docs/specification.md, "Seller notifications"). */
const verifies = (header: string | undefined, rawBody: string, secret: string): boolean => {
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '') ?? [];
  if (!t || !v1) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  return timingSafeEqual(Buffer.from(v1, 'hex'), expected);
};

/** The AppError kind a call fails with. */
const failsWith = (work: Promise<unknown>, kind: string) => expect(work).rejects.toMatchObject({ kind });

const placed = (orderId: number, sellerAccountId = SELLER): SellerEvent => ({
  type: 'order.placed',
  subject: `order.placed:${orderId}`,
  sellerAccountId,
  orderId,
  occurredAt: START,
  data: { order_id: orderId },
});

describe.each(testEngines())('seller webhooks on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let deps: SellerWebhookDependencies;
  let fetcher: GuardedFetcher;
  let worker: DeliveryWorker;
  const receivers: WebhookReceiver[] = [];
  const clock = new ManualClock(START);

  const receiver = async (statuses: number[] = []) => {
    const started = await WebhookReceiver.start(statuses);
    receivers.push(started);
    return started;
  };
  const queue = (...events: SellerEvent[]) => db.transaction((tx) => queueSellerEvents(deps, tx, events));

  beforeAll(async () => {
    db = await create();
    fetcher = createGuardedFetcher({ allowList: LOOPBACK, timeoutMs: 2_000 });
  });

  afterAll(async () => {
    await fetcher.close();
    await db.close();
  });

  beforeEach(async () => {
    schema = freshSchemaName('seller_webhooks');
    await migrate(db, schema, subscriptionMigrations);
    clock.set(START);
    deps = {
      db,
      clock,
      webhooks: new SellerWebhooksTable(schema),
      deliveries: new DeliveriesTable(schema),
      signingSecret: SECRET,
      webhookAddresses: createAddressPolicy(LOOPBACK),
    };
    worker = startDeliveryWorker({
      db,
      deliveries: deps.deliveries,
      clock,
      logger,
      runLoop: false,
      send: createDeliverySender({
        fetcher,
        mailer: new RecordingMailer(),
        signingSecret: SECRET,
        signingKey: ephemeralSigningKey(),
        // A seller's endpoint is never rotated: its secret is generation 0 of its id.
        webhookSecretOf: async () => undefined,
        clock,
        publicBaseUrl: 'https://market.example',
      }),
    });
  });

  afterEach(async () => {
    await worker.stop();
    await Promise.all(receivers.splice(0).map((started) => started.close()));
    await dropSchema(db, schema);
  });

  it('signs each endpoint’s order.placed with its own secret, and tells no other seller', async () => {
    const [mine, second, theirs] = [await receiver(), await receiver(), await receiver()];
    const a = await registerSellerWebhook(deps, { sellerAccountId: SELLER, url: mine.url });
    const b = await registerSellerWebhook(deps, { sellerAccountId: SELLER, url: second.url });
    const c = await registerSellerWebhook(deps, { sellerAccountId: OTHER_SELLER, url: theirs.url });
    expect(new Set([a.secret, b.secret, c.secret]).size).toBe(3);
    expect(a.secret).toMatch(/^whsec_/);

    expect(await queue(placed(12))).toBe(2);
    // A redelivered event queues nothing new.
    await queue(placed(12));
    expect(await worker.processDue()).toBe(2);
    expect(theirs.received).toEqual([]);
    for (const [endpoint, secret] of [
      [mine, a.secret],
      [second, b.secret],
    ] as const) {
      expect(endpoint.received).toHaveLength(1);
      const [hook] = endpoint.received;
      expect(hook?.headers['x-marketplace-event']).toBe('order.placed');
      expect(JSON.parse(hook?.body ?? '{}')).toMatchObject({ type: 'order.placed', data: { order_id: 12 } });
      const signature = hook?.headers['x-marketplace-signature'] as string | undefined;
      expect(verifies(signature, hook?.body ?? '', secret)).toBe(true);
      expect(verifies(signature, hook?.body ?? '', c.secret)).toBe(false);
    }
  });

  it('sends order.disputed to the seller of the order, and retries a 503 with backoff', async () => {
    const flaky = await receiver([503]);
    await registerSellerWebhook(deps, { sellerAccountId: SELLER, url: flaky.url });
    await queue(placed(13));
    await queue({
      type: 'order.disputed',
      subject: 'order.disputed:13',
      orderId: 13,
      occurredAt: START,
      data: { order_id: 13 },
    });
    // An order never placed (its seller unknown) goes nowhere.
    expect(
      await queue({
        type: 'order.disputed',
        subject: 'order.disputed:99',
        orderId: 99,
        occurredAt: START,
        data: {},
      }),
    ).toBe(0);
    await worker.processDue();
    clock.advance(1_000);
    await worker.processDue();
    const events = flaky.received.map((hook) => hook.headers['x-marketplace-event']);
    expect(events.filter((type) => type === 'order.disputed')).not.toHaveLength(0);
    const [listed] = await listSellerWebhooks(deps, SELLER);
    expect(listed?.deliveries.map((d) => [d.productId, d.status]).sort()).toEqual([
      ['order.disputed:13', 'delivered'],
      ['order.placed:13', 'delivered'],
    ]);
    expect(flaky.received.length).toBe(3); // one 503, then both delivered
  });

  it('queues a batch in order: an order placed early in it names the seller of its later events', async () => {
    const mine = await receiver();
    const theirs = await receiver();
    await registerSellerWebhook(deps, { sellerAccountId: SELLER, url: mine.url });
    await registerSellerWebhook(deps, { sellerAccountId: OTHER_SELLER, url: theirs.url });
    const disputed = {
      type: 'order.disputed',
      subject: 'order.disputed:14',
      orderId: 14,
      occurredAt: START,
      data: { order_id: 14 },
    } as const;
    const otherPlaced = placed(15, OTHER_SELLER);
    expect(await queue(placed(14), disputed, otherPlaced, placed(16))).toBe(4);
    // The same batch delivered again queues nothing new.
    await queue(placed(14), disputed, otherPlaced, placed(16));
    expect(await worker.processDue()).toBe(4);
    expect(mine.received.map((hook) => (JSON.parse(hook.body) as { type: string }).type).sort()).toEqual([
      'order.disputed',
      'order.placed',
      'order.placed',
    ]);
    expect(theirs.received.map((hook) => (JSON.parse(hook.body) as { data: unknown }).data)).toEqual([
      { order_id: 15 },
    ]);
  });

  it('refuses bad and private URLs, more than the maximum, and another seller’s delete', async () => {
    for (const url of ['ftp://example.com/x', 'http://10.0.0.1/hook', 'not a url']) {
      await failsWith(registerSellerWebhook(deps, { sellerAccountId: SELLER, url }), 'validation');
    }
    const endpoints = [];
    for (let n = 0; n < SELLER_WEBHOOKS_MAX; n++) {
      endpoints.push(
        await registerSellerWebhook(deps, { sellerAccountId: SELLER, url: `https://hooks.example/${n}` }),
      );
    }
    await failsWith(
      registerSellerWebhook(deps, { sellerAccountId: SELLER, url: 'https://hooks.example/extra' }),
      'conflict',
    );
    const endpointId = endpoints[0]?.webhook.endpointId ?? '';
    await failsWith(deleteSellerWebhook(deps, { sellerAccountId: OTHER_SELLER, endpointId }), 'not_found');
    await deleteSellerWebhook(deps, { sellerAccountId: SELLER, endpointId });
    await failsWith(deleteSellerWebhook(deps, { sellerAccountId: SELLER, endpointId }), 'not_found');
    // A deleted endpoint receives nothing more.
    expect(await queue(placed(20))).toBe(SELLER_WEBHOOKS_MAX - 1);
    expect((await listSellerWebhooks(deps, SELLER)).map((w) => w.endpointId)).not.toContain(endpointId);
  });
});
