import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { LIVENESS_HEALTH_SERVICE, serveGrpcService, waitForServing } from '../src/index.js';

const logger = pino({ level: 'silent' });

describe('serveGrpcService', () => {
  it('serves health, reports readiness from the caught-up check, and drains once, server first', async () => {
    const order: string[] = [];
    let caughtUp = false;
    const handle = await serveGrpcService({
      host: '127.0.0.1',
      port: 0,
      services: [],
      logger,
      serviceName: 'skeleton',
      isCaughtUp: () => caughtUp,
      afterServerStopped: async () => {
        order.push('after-server');
      },
    });
    await waitForServing(handle.address, { timeoutMs: 5_000, service: LIVENESS_HEALTH_SERVICE });
    expect(handle.name).toBe('skeleton');
    expect(handle.isReady()).toBe(false);
    caughtUp = true;
    expect(handle.isReady()).toBe(true);
    await waitForServing(handle.address, { timeoutMs: 5_000 });

    const first = handle.stop();
    const second = handle.stop();
    expect(second).toBe(first);
    expect(handle.isReady()).toBe(false);
    await first;
    expect(order).toEqual(['after-server']);
    await expect(waitForServing(handle.address, { timeoutMs: 300 })).rejects.toThrow();
  });

  it('reports NOT_SERVING through health while behind, and SERVING again once caught up; liveness stays SERVING', async () => {
    let caughtUp = true;
    const handle = await serveGrpcService({
      host: '127.0.0.1',
      port: 0,
      services: [],
      logger,
      serviceName: 'projection',
      isCaughtUp: () => caughtUp,
      readinessRefreshMs: 20,
    });
    try {
      await waitForServing(handle.address, { timeoutMs: 5_000 });
      caughtUp = false;
      await new Promise((resolve) => setTimeout(resolve, 100));
      await expect(waitForServing(handle.address, { timeoutMs: 200 })).rejects.toThrow(/NOT_SERVING/);
      await waitForServing(handle.address, { timeoutMs: 1_000, service: LIVENESS_HEALTH_SERVICE });
      caughtUp = true;
      await waitForServing(handle.address, { timeoutMs: 1_000 });
    } finally {
      await handle.stop();
    }
  });
});

describe('waitForServing', () => {
  it('stops waiting when its signal aborts, long before its timeout', async () => {
    const closedPort = '127.0.0.1:1';
    const started = Date.now();
    await expect(
      waitForServing(closedPort, { timeoutMs: 60_000, signal: AbortSignal.timeout(300) }),
    ).rejects.toMatchObject({ name: expect.stringMatching(/^(AbortError|TimeoutError)$/) });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
