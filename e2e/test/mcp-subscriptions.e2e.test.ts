import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';

/** How late a notification may arrive after the publication's 201 (docs/agents.md, "MCP resource subscriptions"). */
const NOTIFICATION_BUDGET_MS = 1_000;

interface SessionClient {
  readonly client: Client;
  /** Resolves once the session's GET stream is open (notifications travel on it). */
  readonly streamOpen: Promise<void>;
  /** Every notifications/resources/updated received, with the time it arrived. */
  readonly updates: { uri: string; at: number }[];
}

/**
 * MCP resource subscriptions with the official SDK client against `pnpm start` (docs/agents.md, "MCP resource
 * subscriptions"): an authenticated initialize opens a session, the owner subscribes to its saved search, a
 * seller publishes a matching listing and the notification arrives within a second of the 201 on the session's
 * GET stream; the resource then lists the listing. Another buyer may not subscribe; unsubscribing stops them.
 */
describe('MCP resource subscriptions (embedded mode)', () => {
  let marketplace: E2eMarketplace;
  const clients: Client[] = [];
  let sellerKey: string;
  let buyer: SessionClient;
  let otherBuyer: SessionClient;
  let anonymous: Client;
  let savedSearchUri: string;
  const word = `vexmorrow${Date.now().toString(36)}`;

  const connect = async (apiKey?: string): Promise<SessionClient> => {
    const client = new Client({ name: 'subscriptions-e2e', version: '1.0.0' });
    const updates: SessionClient['updates'] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push({ uri: notification.params.uri, at: Date.now() });
    });
    let opened: () => void = () => {};
    const streamOpen = new Promise<void>((resolve) => (opened = resolve));
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl), {
        requestInit: { headers: apiKey ? { 'x-mcp-api-key': apiKey } : {} },
        // The SDK opens the GET stream on its own after initializing; the test waits for its answer.
        fetch: async (input, init) => {
          const answer = await fetch(input, init);
          if ((init?.method ?? 'GET') === 'GET' && answer.ok) opened();
          return answer;
        },
      }),
    );
    clients.push(client);
    return { client, streamOpen, updates };
  };

  const publish = async (name: string) => {
    const sentAt = Date.now();
    const published = await marketplace.client.publish(sellerKey, {
      name,
      description: 'Overstock lot, boxed',
      imageUrl: marketplace.images.imageUrl(name.replace(/\W+/g, '-')),
      price: 12,
      quantity: 40,
      condition: 'overstock',
      category: 'home_goods',
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    return { productId: published.body.id, sentAt, at: Date.now() };
  };

  const waitFor = async <T>(find: () => T | undefined, timeoutMs: number): Promise<T | undefined> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found !== undefined || Date.now() > deadline) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
    const [seller, buyerAccount, otherAccount] = await Promise.all([
      marketplace.client.createAccount('seller', 'Subscription Seller'),
      marketplace.client.createAccount('buyer', 'Subscription Buyer'),
      marketplace.client.createAccount('buyer', 'Subscription Other Buyer'),
    ]);
    sellerKey = seller.apiKey;
    [buyer, otherBuyer] = await Promise.all([connect(buyerAccount.apiKey), connect(otherAccount.apiKey)]);
    anonymous = (await connect()).client;
    const saved = (await buyer.client.callTool({
      name: 'subscribe_to_query',
      arguments: { query: { search: word }, channels: [{ type: 'mcp_resource' }] },
    })) as CallToolResult;
    expect(saved.isError ?? false).toBe(false);
    savedSearchUri = (saved.structuredContent as { resource_uri: string }).resource_uri;
    expect(savedSearchUri).toMatch(/^marketplace:\/\/subscriptions\/sub_/);
    await Promise.all([buyer.streamOpen, otherBuyer.streamOpen]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await marketplace?.stop();
  }, 60_000);

  it('advertises resources.subscribe in a session only', () => {
    expect(buyer.client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: false });
    expect(anonymous.getServerCapabilities()?.resources).toEqual({ subscribe: false, listChanged: false });
  });

  it("refuses another buyer's subscription to the saved search, and a resource that cannot be watched", async () => {
    await expect(otherBuyer.client.subscribeResource({ uri: savedSearchUri })).rejects.toMatchObject({
      code: -32002,
    });
    await expect(buyer.client.subscribeResource({ uri: 'marketplace://stats' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('uri'),
    });
  });

  it('notifies the owner within 1 s of a matching publication, and the resource lists the match', async () => {
    await buyer.client.subscribeResource({ uri: savedSearchUri });
    const { productId, sentAt, at } = await publish(`${word} desk lamps`);
    const update = await waitFor(
      () => buyer.updates.find((received) => received.uri === savedSearchUri),
      10_000,
    );
    expect(update).toBeDefined();
    // Negative when the notification overtook the 201 on its way to the client.
    const latencyMs = update!.at - at;
    process.stdout.write(
      `notifications/resources/updated ${latencyMs} ms after the publication's 201, ` +
        `${update!.at - sentAt} ms after its request was sent\n`,
    );
    expect(latencyMs).toBeLessThan(NOTIFICATION_BUDGET_MS);
    const read = await buyer.client.readResource({ uri: savedSearchUri });
    const resource = JSON.parse((read.contents[0] as { text: string }).text) as {
      matches: { product: { id: string } }[];
    };
    expect(resource.matches.map((match) => match.product.id)).toContain(productId);
    expect(otherBuyer.updates).toEqual([]);
  });

  it("ends a session's open stream when its key is revoked, and the key reaches the session no more", async () => {
    const account = await marketplace.client.createAccount('buyer', 'Subscription Revoked Buyer');
    let streamEnded: () => void = () => {};
    const ended = new Promise<void>((resolve) => (streamEnded = resolve));
    const client = new Client({ name: 'subscriptions-e2e-revoked', version: '1.0.0' });
    let opened: () => void = () => {};
    const streamOpen = new Promise<void>((resolve) => (opened = resolve));
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', marketplace.client.baseUrl), {
        requestInit: { headers: { 'x-mcp-api-key': account.apiKey } },
        // Reconnecting would only meet the revoked key (401): the test watches the first stream end.
        reconnectionOptions: {
          maxRetries: 0,
          initialReconnectionDelay: 1,
          maxReconnectionDelay: 1,
          reconnectionDelayGrowFactor: 1,
        },
        fetch: async (input, init) => {
          const answer = await fetch(input, init);
          if ((init?.method ?? 'GET') !== 'GET' || !answer.ok || answer.body === null) return answer;
          opened();
          // The same bytes go on to the SDK; the copy tells the test when the server ended the stream.
          const [forSdk, forTest] = answer.body.tee();
          void forTest
            .pipeTo(new WritableStream())
            .catch(() => undefined)
            .finally(streamEnded);
          return new Response(forSdk, { status: answer.status, headers: answer.headers });
        },
      }),
    );
    clients.push(client);
    await streamOpen;
    await client.subscribeResource({ uri: savedSearchUri }).catch(() => undefined);

    const prefix = account.apiKey.split('_').slice(0, 2).join('_');
    const revoked = await marketplace.client.request(`/api/admin/api-keys/${prefix}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${marketplace.adminToken}` },
    });
    expect(revoked.status).toBe(204);
    // Unreferenced: the deadline outlives a stream that ended in time, and it must not keep the jest worker
    // from exiting once this file is done (jest reports such a worker as leaking and force-exits it).
    const outcome = await Promise.race([
      ended.then(() => 'ended'),
      sleep(5_000, 'still open', { ref: false }),
    ]);
    expect(outcome).toBe('ended');
    await expect(client.listResources()).rejects.toThrow();
  });

  it('stops notifying once unsubscribed', async () => {
    await buyer.client.unsubscribeResource({ uri: savedSearchUri });
    const before = buyer.updates.length;
    const { productId } = await publish(`${word} floor lamps`);
    // The match is recorded (the resource lists it), yet no notification follows.
    let listed = false;
    for (let attempt = 0; attempt < 100 && !listed; attempt++) {
      const read = await buyer.client.readResource({ uri: savedSearchUri });
      listed = (read.contents[0] as { text: string }).text.includes(productId);
      if (!listed) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(listed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, NOTIFICATION_BUDGET_MS));
    expect(buyer.updates.length).toBe(before);
  });
});
