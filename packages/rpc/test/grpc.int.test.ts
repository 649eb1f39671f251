import { describe, expect, it } from '@jest/globals';
import { createServer as createNetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Status, createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health.js';
import { createServingProbe, waitForServing } from '../src/index.js';
import { catchError } from './support/services.js';
import { CATALOG_SERVICE, describeTransportContract, startTestServer } from './support/transport-contract.js';

const LOOPBACK = '127.0.0.1';

/** A loopback port nothing listens on (bound, then released). */
const freePort = async (): Promise<number> => {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, LOOPBACK, resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
};

describeTransportContract({
  name: 'over a socket',
  host: LOOPBACK,
  rawClient: (definition, address) => {
    const channel = createChannel(address);
    return { client: createClient(definition, channel), close: () => channel.close() };
  },
  unreachableAddress: async () => `${LOOPBACK}:${await freePort()}`,
  handlerAborts: 'a moment later',
});

describe('a gRPC server on a socket', () => {
  it('binds an ephemeral loopback port and returns its address', async () => {
    const server = await startTestServer(LOOPBACK);
    try {
      expect(server.port).toBeGreaterThan(0);
      expect(server.address).toBe(`${LOOPBACK}:${server.port}`);
    } finally {
      await server.shutdown(1_000);
    }
  });

  it('is waited for by waitForServing before it listens', async () => {
    const port = await freePort();
    const late = sleep(400).then(() => startTestServer(LOOPBACK, { port }));
    try {
      await waitForServing(`${LOOPBACK}:${port}`, { timeoutMs: 5_000, service: CATALOG_SERVICE });
    } finally {
      await (await late).shutdown(1_000);
    }
  });

  it('is answered by a kept serving probe again once restarted on its port', async () => {
    const port = await freePort();
    let server = await startTestServer(LOOPBACK, { port });
    const probe = createServingProbe(`${LOOPBACK}:${port}`);
    try {
      await probe.waitForServing({ timeoutMs: 2_000 });
      await server.shutdown(1_000);
      expect(await catchError(probe.waitForServing({ timeoutMs: 300 }))).toMatchObject({
        kind: 'unavailable',
      });
      server = await startTestServer(LOOPBACK, { port });
      // It reconnects as often as it polls: a check as long as the gateway's (1 s), with room for a loaded machine.
      await probe.waitForServing({ timeoutMs: 2_000 });
    } finally {
      probe.close();
      await server.shutdown(1_000);
    }
  });

  it('ends health Watch streams on shutdown instead of waiting for them', async () => {
    const server = await startTestServer(LOOPBACK);
    const channel = createChannel(server.address);
    try {
      const updates = createClient(HealthDefinition, channel).watch({ service: '' })[Symbol.asyncIterator]();
      expect((await updates.next()).value).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
      const startedAt = performance.now();
      await server.shutdown(10_000);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      const drained = (async () => {
        for (;;) if ((await updates.next()).done === true) return 'ended';
      })();
      await expect(drained).rejects.toMatchObject({ code: Status.CANCELLED });
    } finally {
      channel.close();
    }
  });
});
