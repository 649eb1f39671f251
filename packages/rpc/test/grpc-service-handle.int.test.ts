import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { serveGrpcService, waitForServing } from '../src/index.js';

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
    await waitForServing(handle.address, { timeoutMs: 5_000 });
    expect(handle.name).toBe('skeleton');
    expect(handle.isReady()).toBe(false);
    caughtUp = true;
    expect(handle.isReady()).toBe(true);

    const first = handle.stop();
    const second = handle.stop();
    expect(second).toBe(first);
    expect(handle.isReady()).toBe(false);
    await first;
    expect(order).toEqual(['after-server']);
    await expect(waitForServing(handle.address, { timeoutMs: 300 })).rejects.toThrow();
  });
});
