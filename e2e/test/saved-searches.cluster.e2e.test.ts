import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from '../src/harness/cluster.js';
import { eventually } from '../src/harness/processes.js';
import { WebhookReceiver } from '../src/harness/webhook-receiver.js';

/**
 * Cluster mode, the subscription service killed (SIGKILL) while matching lots stream in and restarted: every
 * listing's webhook arrives after the restart, under one delivery id per listing.
 */
describe('saved searches survive a crash of the subscription service', () => {
  let cluster: Cluster;
  let receiver: WebhookReceiver;
  let sellerKey: string;
  let buyerKey: string;

  beforeAll(async () => {
    cluster = await Cluster.start();
    receiver = await WebhookReceiver.start();
    sellerKey = (await cluster.adminClient().createAccount('seller', 'Crash Seller')).apiKey;
    buyerKey = (await cluster.adminClient().createAccount('buyer', 'Crash Agent')).apiKey;
  }, 180_000);

  afterAll(async () => {
    await receiver?.close();
    await cluster?.stop();
  }, 60_000);

  it('delivers every due webhook once after a kill -9 mid-burst', async () => {
    const subscribed = await cluster.client.request('/api/subscriptions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mcp-api-key': buyerKey },
      body: JSON.stringify({
        query: { search: 'brannock' },
        channels: [{ type: 'webhook', url: receiver.url }],
      }),
    });
    expect(subscribed.status).toBe(201);
    const total = 30;
    const published: string[] = [];
    for (let n = 0; n < total; n++) {
      if (n === 10) await cluster.process('subscription').stop('SIGKILL');
      if (n === 20) cluster.process('subscription').start();
      const listing = await cluster.client.publish(sellerKey, {
        name: `Brannock shoe sizers lot ${n}`,
        description: 'Overstock',
        imageUrl: cluster.images.imageUrl('sizer'),
        price: 4,
        quantity: 20 + n,
        promotePublicly: true,
      });
      expect(listing.status).toBe(201);
      published.push(listing.body.id);
    }
    await cluster.waitForService('subscription');
    await eventually(
      async () => (new Set(receiver.received.map(productOf)).size >= total ? true : undefined),
      { timeoutMs: 90_000, intervalMs: 200, describe: () => cluster.describeProcesses() },
    );
    // Anything still in flight would have arrived by now (the lease after a crash is 15 s).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const products = receiver.received.map(productOf);
    expect(new Set(products)).toEqual(new Set(published));
    // One delivery per listing; a receipt may repeat only for an attempt the kill cut mid-flight, and then under
    // the same delivery id (the receiver's idempotency key).
    const deliveryOf = new Map<string, string>();
    for (const webhook of receiver.received) {
      const deliveryId = String(webhook.headers['x-marketplace-delivery']);
      expect(deliveryOf.get(productOf(webhook)) ?? deliveryId).toBe(deliveryId);
      deliveryOf.set(productOf(webhook), deliveryId);
    }
    expect(new Set(deliveryOf.values()).size).toBe(total);
  }, 240_000);
});

const productOf = (webhook: { body: string }): string =>
  (JSON.parse(webhook.body) as { data: { product: { id: string } } }).data.product.id;
