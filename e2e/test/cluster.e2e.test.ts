import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from '../src/harness/cluster.js';
import { eventually } from '../src/harness/processes.js';

/**
 * Cluster mode: every service a process of its own, on the local PostgreSQL and NATS JetStream.
 * The catalog is killed (SIGKILL) while listings stream in; after its restart nothing is lost or duplicated.
 */
describe('cluster mode on PostgreSQL and NATS', () => {
  let cluster: Cluster;
  let sellerKey: string;

  beforeAll(async () => {
    cluster = await Cluster.start();
    sellerKey = (await cluster.adminClient().createAccount('seller', 'Cluster Seller')).apiKey;
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('publishes through the gateway and finds the listing through search', async () => {
    const published = await cluster.client.publish(sellerKey, {
      name: 'Tarnwick industrial fans',
      description: 'Overstock from a warehouse closure',
      imageUrl: cluster.images.imageUrl('fans'),
      price: 55,
      quantity: 12,
      category: 'home_goods',
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    const found = await eventually(
      async () => (await cluster.client.search({ q: 'tarnwick', category: 'home_goods' })).products[0],
      { timeoutMs: 10_000, describe: () => cluster.describeProcesses() },
    );
    expect(found).toMatchObject({ id: published.body.id, price: 5500, quantity_available: 12 });
  });

  it('loses and duplicates nothing when the catalog is killed mid-stream', async () => {
    const total = 60;
    const ids: string[] = [];
    for (let n = 0; n < total; n++) {
      if (n === 20) await cluster.process('catalog').stop('SIGKILL');
      if (n === 40) {
        cluster.process('catalog').start();
      }
      const published = await cluster.client.publish(sellerKey, {
        name: `Ostrander crate ${n}`,
        description: 'Mixed salvage lot',
        imageUrl: cluster.images.imageUrl('crate'),
        price: 3,
        quantity: 1 + n,
        promotePublicly: true,
      });
      expect(published.status).toBe(201);
      ids.push(published.body.id);
    }
    await cluster.waitForService('catalog');
    const found = await eventually(
      async () => {
        const products = await cluster.client.searchAll('ostrander');
        return products.length >= total ? products : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, describe: () => cluster.describeProcesses() },
    );
    const foundIds = found.map((product) => product.id);
    expect(foundIds).toHaveLength(total);
    expect(new Set(foundIds)).toEqual(new Set(ids));
  }, 120_000);
});
