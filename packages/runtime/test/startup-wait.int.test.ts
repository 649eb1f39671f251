import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { createLogger, parseEnv } from '@marketplace/platform';
import { createInfrastructure } from '../src/infrastructure.js';
import { infrastructureConfigSchema } from '../src/infrastructure.config.js';
import { retryDuringStartup } from '../src/startup-retry.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const DATABASE_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS = new URL(process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222');

/** A port nothing listens on yet; `open()` later forwards it to the real NATS server, like a broker coming up. */
const lateBroker = async () => {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  return {
    url: `nats://127.0.0.1:${port}`,
    open: async () => {
      server = createServer((client) => {
        const upstream = tcpConnect(Number(NATS.port || 4222), NATS.hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('error', () => socket.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    },
  };
};

describe('start-up waits for its dependencies', () => {
  it('waits for a broker that comes up after the service started, instead of failing', async () => {
    const broker = await lateBroker();
    const config = parseEnv(infrastructureConfigSchema, {
      DATABASE_URL,
      EVENT_LOG: 'nats',
      NATS_URL: broker.url,
      STARTUP_TIMEOUT_MS: '10000',
    });
    const opening = createInfrastructure(config, logger, 'startup-test');
    await new Promise((resolve) => setTimeout(resolve, 600));
    await broker.open();
    const infrastructure = await opening;
    try {
      await infrastructure.log.publish('marketplace.startup-test.v1', [
        { key: 'k', value: new Uint8Array([1]), headers: { ce_id: 'e-1' } },
      ]);
    } finally {
      await infrastructure.close();
      await broker.close();
    }
  });

  it('gives up after the start-up timeout with the last failure', async () => {
    let attempts = 0;
    const failing = retryDuringStartup(
      async () => {
        attempts++;
        throw new Error('connection refused');
      },
      { timeoutMs: 200, logger, what: 'nothing', firstDelayMs: 20 },
    );
    await expect(failing).rejects.toThrow('connection refused');
    expect(attempts).toBeGreaterThan(2);
  });
});
