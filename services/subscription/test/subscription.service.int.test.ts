import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import type { ServiceHandle } from '@marketplace/platform';
import { createLogger, systemClock } from '@marketplace/platform';
import { accountV1, listingV1, subscriptionV1 } from '@marketplace/proto';
import type { GrpcClient } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import { startSubscriptionService } from '../src/index.js';
import { RecordingMailer, WebhookReceiver } from './support.js';

const BUYER = 42;
const SELLER = 77;
const actor = { kind: 'buyer', id: String(BUYER) };

const listingEvent = (productId: string, overrides: Partial<listingV1.Listing> = {}) => {
  const now = Date.now();
  return listingV1.ListingEvent.encode({
    eventId: randomUUID(),
    productId,
    version: 1,
    occurredAtMs: now,
    actor: { kind: 'seller', id: String(SELLER) },
    correlationId: '',
    payload: {
      $case: 'created',
      value: {
        listing: listingV1.Listing.fromPartial({
          productId,
          sellerAccountId: SELLER,
          name: 'Crate of Velmora desk lamps',
          description: 'Overstock, boxed',
          category: 'home_goods',
          condition: 'overstock',
          priceCents: 1_200,
          currency: 'USD',
          quantity: 300,
          minOrderQuantity: 10,
          promotePublicly: true,
          createdAtMs: now,
          updatedAtMs: now,
          ...overrides,
        }),
      },
    },
  }).finish();
};

const sellerCreated = (country: string) =>
  accountV1.AccountEvent.encode({
    eventId: randomUUID(),
    accountId: SELLER,
    version: 1,
    occurredAtMs: Date.now(),
    actor: { kind: 'admin', id: '' },
    correlationId: '',
    payload: {
      $case: 'created',
      value: { role: 'seller', name: 'Velmora', email: 'v@example.com', company: '', country },
    },
  }).finish();

/** The service as it runs: gRPC in, listing and account events from the log, webhooks out. */
describe.each(testEngines().filter((engine) => engine.name === 'postgres'))(
  'subscription service with its consumers on $name',
  ({ create }) => {
    const schema = freshSchemaName('subscription_service');
    const logSchema = freshSchemaName('eventlog_subscription');
    let db: Database;
    let log: EventLog;
    let service: ServiceHandle;
    let grpc: GrpcClient<subscriptionV1.SubscriptionServiceDefinition>;
    let receiver: WebhookReceiver;

    const publish = (topic: string, key: string, value: Uint8Array) =>
      log.publish(topic, [{ key, value, headers: { ce_id: randomUUID() } }]);

    beforeAll(async () => {
      db = await create();
      log = await createEmbeddedEventLog({ db, schema: logSchema, pollIntervalMs: 50 });
      receiver = await WebhookReceiver.start();
      service = await startSubscriptionService({
        db,
        log,
        logger: createLogger({ service: 'subscription-test', level: 'error' }),
        clock: systemClock,
        grpc: { host: '127.0.0.1', port: 0 },
        schema,
        mailer: new RecordingMailer(),
        signingSecret: 'service-test-secret-0123456789abcdef',
        outboundAllowList: { hosts: ['127.0.0.1'], cidrs: ['127.0.0.1/32'] },
      });
      grpc = createGrpcClient(subscriptionV1.SubscriptionServiceDefinition, service.address);
    });

    afterAll(async () => {
      grpc.close();
      await service.stop();
      await log.close();
      await receiver.close();
      await dropSchema(db, schema);
      await dropSchema(db, logSchema);
      await db.close();
    });

    it('reports validation failures with the field over gRPC', async () => {
      await expect(
        grpc.client.subscribe({
          actor,
          ownerAccountId: BUYER,
          queryJson: JSON.stringify({ maxPrice: 'cheap' }),
          channels: [],
          correlationId: '',
        }),
      ).rejects.toMatchObject({
        kind: 'validation',
        violations: [
          { path: 'query/maxPrice', message: expect.any(String) },
          { path: 'channels', message: 'must have 1 to 5 items' },
        ],
      });
    });

    it('waits for the seller’s country, then notifies once however often the listing event comes', async () => {
      const { subscription } = await grpc.client.subscribe({
        actor,
        ownerAccountId: BUYER,
        queryJson: JSON.stringify({ category: 'home_goods', sellerCountry: 'US', search: 'desk lamp' }),
        channels: [
          { kind: { $case: 'webhook', value: { url: receiver.url } } },
          { kind: { $case: 'mcpResource', value: {} } },
        ],
        correlationId: '',
      });
      const subscriptionId = subscription!.subscriptionId;
      // The listing arrives before its seller's account event: matching waits instead of missing it.
      const event = listingEvent('product_900');
      await publish('marketplace.listing.v1', 'product_900', event);
      await publish(
        'marketplace.listing.v1',
        'product_901',
        listingEvent('product_901', { name: 'Floor rugs' }),
      );
      await sleep(300);
      expect(receiver.received).toHaveLength(0);
      await publish('marketplace.account.v1', `account_${SELLER}`, sellerCreated('US'));
      for (let waited = 0; receiver.received.length === 0 && waited < 10_000; waited += 50) await sleep(50);
      expect(receiver.received).toHaveLength(1);

      // Redelivered under a new message id (a republished event): the (subscription, listing) record holds.
      await publish('marketplace.listing.v1', 'product_900', event);
      await sleep(500);
      expect(receiver.received).toHaveLength(1);
      const resource = await grpc.client.getSubscriptionResource({
        actor,
        subscriptionId,
        ownerAccountId: BUYER,
      });
      expect(resource.matches.map((match) => match.productId)).toEqual(['product_900']);
      expect(resource.deliveries).toEqual([
        expect.objectContaining({
          channelType: 'webhook',
          status: 'delivered',
          attempts: 1,
          productId: 'product_900',
        }),
      ]);
      const other = { kind: 'buyer', id: String(BUYER + 1) };
      await expect(
        grpc.client.getSubscriptionResource({ actor: other, subscriptionId, ownerAccountId: BUYER + 1 }),
      ).rejects.toMatchObject({ kind: 'not_found' });
    }, 30_000);

    // docs/security.md, "Internal calls": a valid token for one account cannot act for another.
    it("refuses every call whose body names another account than the token's, changing nothing", async () => {
      const VICTIM = BUYER + 7;
      const victim = { kind: 'buyer', id: String(VICTIM) };
      const { subscription } = await grpc.client.subscribe({
        actor: victim,
        ownerAccountId: VICTIM,
        queryJson: JSON.stringify({ category: 'toys' }),
        channels: [{ kind: { $case: 'webhook', value: { url: receiver.url } } }],
        correlationId: '',
      });
      const subscriptionId = subscription!.subscriptionId;
      // The client signs its token for the request's actor: BUYER's token (or an anonymous one), VICTIM in the body.
      for (const token of [actor, { kind: 'anonymous', id: '' }]) {
        const forged = [
          grpc.client.subscribe({
            actor: token,
            ownerAccountId: VICTIM,
            queryJson: '{}',
            channels: [{ kind: { $case: 'mcpResource', value: {} } }],
            correlationId: '',
          }),
          grpc.client.listSubscriptions({ actor: token, ownerAccountId: VICTIM }),
          grpc.client.getSubscriptionResource({ actor: token, subscriptionId, ownerAccountId: VICTIM }),
          grpc.client.deleteSubscription({ actor: token, subscriptionId, ownerAccountId: VICTIM }),
          grpc.client.rotateWebhookSecret({ actor: token, subscriptionId, ownerAccountId: VICTIM }),
        ];
        for (const call of forged) {
          await expect(call).rejects.toMatchObject({
            kind: 'forbidden',
            message: expect.stringContaining("is not the authenticated caller's account"),
          });
        }
      }
      const { subscriptions } = await grpc.client.listSubscriptions({
        actor: victim,
        ownerAccountId: VICTIM,
      });
      expect(subscriptions.map((listed) => listed.subscriptionId)).toEqual([subscriptionId]);
      const rotated = await grpc.client.rotateWebhookSecret({
        actor: victim,
        subscriptionId,
        ownerAccountId: VICTIM,
      });
      expect(rotated.secretGeneration).toBe(1);
    });
  },
);
