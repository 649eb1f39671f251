import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { once } from 'node:events';

/** How a stalling image host behaves once connected to. */
export type StallMode =
  /** Accepts the connection and never answers a byte. */
  | 'silent'
  /** Answers a PNG's headers at once, then one byte of its body every `trickleIntervalMs`, never finishing. */
  | 'trickle';

export interface StallingServer {
  /** `http://127.0.0.1:<port>`: allow-list `127.0.0.1` for fetchers to reach it. */
  readonly origin: string;
  /** A URL of an image that never arrives (any path does). */
  imageUrl(name: string): string;
  /** How many connections it accepted. */
  readonly connections: () => number;
  close(): Promise<void>;
}

/**
 * An image host that hangs, for tests of the time a call spends on images: a plain TCP server, so nothing
 * (no HTTP server timeout) ever answers for it or closes the connection.
 */
export const startStallingServer = async (
  mode: StallMode,
  options: { readonly trickleIntervalMs?: number } = {},
): Promise<StallingServer> => {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    if (mode === 'trickle') {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: 1000000\r\n\r\n');
        const timer = setInterval(() => socket.write('\x89'), options.trickleIntervalMs ?? 50);
        timers.add(timer);
        socket.on('close', () => {
          clearInterval(timer);
          timers.delete(timer);
        });
      });
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    imageUrl: (name) => `${origin}/images/${name}.png`,
    connections: () => connections,
    close: async () => {
      for (const timer of timers) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
