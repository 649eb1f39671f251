import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import type { DeliveredMessage } from '@marketplace/eventlog';
import { accountV1 } from '@marketplace/proto';
import { ADMIN_TOKEN, CapturedLog, TestGateway, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

const waitFor = async (condition: () => boolean, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe.each(testEngines())('account events on $name', ({ create }) => {
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;
  const published: DeliveredMessage[] = [];

  beforeAll(async () => {
    db = await create();
    backends = await InMemoryBackends.start(new CapturedLog().logger);
    gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
      adminToken: ADMIN_TOKEN,
    });
    await gateway.eventLog.consume({
      topic: 'marketplace.account.v1',
      group: 'account-events-test',
      handler: async (batch) => {
        published.push(...batch.messages);
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backends?.stop();
    await db?.close();
  });

  it('publishes AccountCreated with the profile, keyed by account, through the outbox', async () => {
    const { status, body } = await gateway.postJson(
      '/api/admin/accounts',
      {
        role: 'seller',
        name: 'Tarnwick Surplus',
        email: 'ops@tarnwick.test',
        company: 'Tarnwick',
        country: 'de',
      },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(status).toBe(201);
    const accountId = (body as { account_id: number }).account_id;
    await waitFor(() => published.length === 1);
    const [message] = published;
    expect(message?.key).toBe(`account_${accountId}`);
    expect(message?.headers['ce_type']).toBe('marketplace.account.v1.AccountCreated');
    const event = accountV1.AccountEvent.decode(message!.value);
    expect(event).toMatchObject({ accountId, version: 1, actor: { kind: 'admin', id: '' } });
    expect(event.payload).toEqual({
      $case: 'created',
      value: {
        role: 'seller',
        name: 'Tarnwick Surplus',
        email: 'ops@tarnwick.test',
        company: 'Tarnwick',
        country: 'DE',
      },
    });
    // The key itself never travels on the log.
    expect(Buffer.from(message!.value).toString('latin1')).not.toContain(
      (body as { api_key: string }).api_key,
    );
  });

  it('publishes nothing for a refused account', async () => {
    const before = published.length;
    const { status } = await gateway.postJson(
      '/api/admin/accounts',
      { role: 'seller', name: '', email: 'not-an-email' },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(status).toBe(400);
    await gateway.postJson(
      '/api/admin/accounts',
      { role: 'buyer', name: 'Buyer', email: 'buyer@example.test' },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    await waitFor(() => published.length === before + 1);
    const event = accountV1.AccountEvent.decode(published.at(-1)!.value);
    expect(event.payload).toMatchObject({ value: { role: 'buyer', company: '', country: '' } });
  });
});
