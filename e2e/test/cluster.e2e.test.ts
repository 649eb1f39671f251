import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { Cluster, ClusterStartError } from '../src/harness/cluster.js';
import { eventually } from '../src/harness/processes.js';
import { WebhookReceiver } from '../src/harness/webhook-receiver.js';

/**
 * Cluster mode: every service a process of its own, on the local PostgreSQL and NATS JetStream. One cluster for
 * the file: each group kills and restarts a different service and uses accounts and names of its own.
 */
let cluster: Cluster;

beforeAll(async () => {
  cluster = await Cluster.start();
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

/** The catalog is killed (SIGKILL) while listings stream in; after its restart nothing is lost or duplicated. */
describe('cluster mode on PostgreSQL and NATS', () => {
  let sellerKey: string;

  beforeAll(async () => {
    sellerKey = (await cluster.adminClient().createAccount('seller', 'Cluster Seller')).apiKey;
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

/**
 * The subscription service killed (SIGKILL) while matching lots stream in and restarted: every
 * listing's webhook arrives after the restart, under one delivery id per listing.
 */
describe('saved searches survive a crash of the subscription service', () => {
  let receiver: WebhookReceiver;
  let sellerKey: string;
  let buyerKey: string;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    sellerKey = (await cluster.adminClient().createAccount('seller', 'Crash Seller')).apiKey;
    buyerKey = (await cluster.adminClient().createAccount('buyer', 'Crash Agent')).apiKey;
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
  });

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

/**
 * MCP resource notifications in cluster mode: the gateway follows the subscription topic on NATS without a
 * consumer group (docs/agents.md, "MCP resource subscriptions"), so a restart leaves no offset rows and no
 * JetStream consumer behind, and the restarted gateway still notifies its sessions.
 */
describe('MCP resource notifications on NATS', () => {
  const topic = () => `${cluster.namespace}.marketplace.subscription.v1`;

  const groupRows = async (): Promise<number> => {
    const client = new pg.Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: string }>(
        `select (select count(*) from eventlog.consumer_offsets where topic = $1)
           + (select count(*) from eventlog.group_members where topic = $1) as count`,
        [topic()],
      );
      return Number(rows[0]!.count);
    } finally {
      await client.end();
    }
  };

  /** The consumers on the topic's stream, and its partition count (from the stream's description). */
  const streamConsumers = async (): Promise<{ consumers: number; partitions: number }> => {
    const connection = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    try {
      const manager = await jetstreamManager(connection);
      const stream = topic().replaceAll('.', '_').toUpperCase();
      const info = await manager.streams.info(stream);
      let consumers = 0;
      for await (const _ of manager.consumers.list(stream)) consumers++;
      return { consumers, partitions: Number(/partitions=(\d+)/.exec(info.config.description ?? '')?.[1]) };
    } finally {
      await connection.close();
    }
  };

  it('leaves no group rows and no consumers of a stopped gateway, and the restarted one notifies a session', async () => {
    await cluster.process('gateway').stop('SIGTERM');
    cluster.process('gateway').start();
    await cluster.waitUntilReady();
    // Only the running gateway's readers, one per partition: the stopped one deleted its own.
    const { partitions } = await streamConsumers();
    await eventually(async () => ((await streamConsumers()).consumers === partitions ? true : undefined), {
      timeoutMs: 10_000,
      describe: () => cluster.describeProcesses(),
    });
    expect(await groupRows()).toBe(0);

    const [seller, buyer] = await Promise.all([
      cluster.adminClient().createAccount('seller', 'Notified Seller'),
      cluster.adminClient().createAccount('buyer', 'Notified Buyer'),
    ]);
    const updates: string[] = [];
    let opened: () => void = () => {};
    const streamOpen = new Promise<void>((resolve) => (opened = resolve));
    const session = new Client({ name: 'cluster-subscriptions-e2e', version: '1.0.0' });
    session.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
    });
    await session.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', cluster.client.baseUrl), {
        requestInit: { headers: { 'x-mcp-api-key': buyer.apiKey } },
        fetch: async (input, init) => {
          const answer = await fetch(input, init);
          if ((init?.method ?? 'GET') === 'GET' && answer.ok) opened();
          return answer;
        },
      }),
    );
    try {
      const saved = (await session.callTool({
        name: 'subscribe_to_query',
        arguments: { query: { search: 'quillfeather' }, channels: [{ type: 'mcp_resource' }] },
      })) as CallToolResult;
      const uri = (saved.structuredContent as { resource_uri: string }).resource_uri;
      await streamOpen;
      await session.subscribeResource({ uri });
      const published = await cluster.client.publish(seller.apiKey, {
        name: 'Quillfeather desk organisers',
        description: 'Overstock lot, boxed',
        imageUrl: cluster.images.imageUrl('organiser'),
        price: 9,
        quantity: 30,
        promotePublicly: true,
      });
      expect(published.status).toBe(201);
      await eventually(async () => (updates.includes(uri) ? true : undefined), {
        timeoutMs: 15_000,
        describe: () => cluster.describeProcesses(),
      });
    } finally {
      await session.close();
    }
    expect(await groupRows()).toBe(0);
  }, 240_000);
});

describe('a cluster start that fails', () => {
  it('stops the processes it started and drops its database', async () => {
    const failure: unknown = await Cluster.start({ env: { EVENT_LOG: 'no-such-log' } }).then(
      () => 'started',
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ClusterStartError);
    const { message, pids, databaseName } = failure as ClusterStartError;
    expect(message).toMatch(/exited while the cluster started/);
    expect(message).toMatch(/EVENT_LOG/);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    const server = new pg.Client({
      connectionString: process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    });
    await server.connect();
    try {
      const { rowCount } = await server.query('select 1 from pg_database where datname = $1', [databaseName]);
      expect(rowCount).toBe(0);
    } finally {
      await server.end();
    }
  }, 60_000);
});
