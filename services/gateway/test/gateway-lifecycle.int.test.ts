import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { dropSchema, testEngines } from '@marketplace/database/testing';
import { CapturedLog, TestGateway, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

/** Nothing listens on port 1: a backend that is down. */
const DOWN = '127.0.0.1:1';

/** A TCP relay to `target` (`host:port`) that counts the connections it accepts and holds open. */
const countingRelay = async (target: string) => {
  const separator = target.lastIndexOf(':');
  const [host, port] = [target.slice(0, separator), Number(target.slice(separator + 1))];
  let accepted = 0;
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    accepted++;
    open.add(socket);
    const upstream = connect(port, host);
    const end = () => {
      socket.destroy();
      upstream.destroy();
      open.delete(socket);
    };
    socket.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    socket.pipe(upstream).pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted: () => accepted,
    open: () => open.size,
    close: async () => {
      for (const socket of open) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
};

const waitUntil = async (done: () => boolean, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe.each(testEngines())('gateway health, readiness and lifecycle on $name', ({ create }) => {
  let db: Database;
  let backends: InMemoryBackends;

  beforeAll(async () => {
    db = await create();
    backends = await InMemoryBackends.start(new CapturedLog().logger);
  }, 60_000);

  afterAll(async () => {
    await backends?.stop();
    await db?.close();
  });

  it('is live and ready when the backends report SERVING over gRPC health and identity is migrated', async () => {
    const gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
    });
    try {
      expect((await gateway.call('/healthz')).status).toBe(200);
      const ready = await gateway.call('/readyz');
      expect(ready).toMatchObject({ status: 200, body: { status: 'ready' } });
      expect(gateway.handle.isReady()).toBe(true);
    } finally {
      await gateway.stop();
    }
  });

  it('is live but not ready while the backends are down, and answers their calls with 503', async () => {
    const gateway = await TestGateway.start(db, { services: backendsAt(DOWN) });
    try {
      expect((await gateway.call('/healthz')).status).toBe(200);
      const notReady = await gateway.call('/readyz');
      expect(notReady.status).toBe(503);
      expect(notReady.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(notReady.body).toMatchObject({
        detail: 'not ready: listing, catalog, subscription, order, quote',
      });
      expect(gateway.handle.isReady()).toBe(false);
      expect((await gateway.call('/api/ucp/catalog/products')).status).toBe(503);
    } finally {
      await gateway.stop();
    }
  });

  it('checks the backends over connections it keeps: no new connection per check, none left after stop()', async () => {
    const relay = await countingRelay(backends.address);
    const gateway = await TestGateway.start(db, { services: backendsAt(relay.address) });
    try {
      expect((await gateway.call('/readyz')).status).toBe(200);
      const kept = relay.accepted();
      // One per backend at most (all five are one address here, each probe on its own connection).
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThanOrEqual(5);
      for (let check = 0; check < 10; check++) {
        expect((await gateway.call('/readyz')).status).toBe(200);
      }
      expect(relay.accepted()).toBe(kept);
      await gateway.handle.stop();
      await waitUntil(() => relay.open() === 0);
    } finally {
      await gateway.stop();
      await relay.close();
    }
  });

  it('uses an injected backend check instead of gRPC health when given one', async () => {
    let backendReady = false;
    const gateway = await TestGateway.start(db, {
      services: backendsAt(DOWN),
      isBackendReady: () => backendReady,
    });
    try {
      expect((await gateway.call('/readyz')).body).toMatchObject({ detail: 'not ready: backends' });
      backendReady = true;
      expect((await gateway.call('/readyz')).status).toBe(200);
    } finally {
      await gateway.stop();
    }
  });

  it('is not ready when the identity tables are gone', async () => {
    const gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
    });
    try {
      await dropSchema(db, gateway.schema);
      expect((await gateway.call('/readyz')).body).toMatchObject({
        status: 503,
        detail: 'not ready: identity',
      });
    } finally {
      await gateway.stop();
    }
  });

  it('has no admin API without an admin token', async () => {
    const gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
    });
    try {
      const answer = await gateway.postJson(
        '/api/admin/accounts',
        { role: 'seller', name: 'n', email: 'n@example.test' },
        { authorization: 'Bearer anything-at-all-here' },
      );
      expect(answer.status).toBe(404);
    } finally {
      await gateway.stop();
    }
  });

  it('follows the saved-search matches without leaving consumer state in the event log, running or stopped', async () => {
    const gateway = await TestGateway.start(db, { services: backendsAt(backends.address) });
    const groupRows = async () => {
      const { rows } = await db.query<{ rows: string }>(
        `select (select count(*) from "${gateway.eventLogSchema}".consumer_offsets)
           + (select count(*) from "${gateway.eventLogSchema}".group_members) as rows`,
      );
      return Number(rows[0]!.rows);
    };
    try {
      // A process that dies here leaves what is stored now: nothing, so restarts add nothing up.
      expect(await groupRows()).toBe(0);
      await gateway.handle.stop();
      expect(await groupRows()).toBe(0);
    } finally {
      await gateway.stop();
    }
  });

  it('stops listening on stop(), and a second stop() is the same drain', async () => {
    const gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
    });
    const first = gateway.handle.stop();
    expect(gateway.handle.stop()).toBe(first);
    await gateway.stop();
    await expect(fetch(`${gateway.baseUrl}/healthz`)).rejects.toThrow();
  });
});
