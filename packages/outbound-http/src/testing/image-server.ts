import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';

/** A valid 1×1 PNG. */
const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

export interface ImageServer {
  /** `http://127.0.0.1:<port>`: allow-list `127.0.0.1` for fetchers to reach it. */
  readonly origin: string;
  /** A URL answering a PNG whose bytes are distinct per `name` (the path follows the image data). */
  imageUrl(name: string): string;
  /** A URL answering HTML with 200: not an image. */
  readonly notAnImageUrl: string;
  /** How many requests it answered. */
  readonly requests: () => number;
  /** How many connections it accepted. */
  readonly connections: () => number;
  close(): Promise<void>;
}

/** Bytes the image server answers for `name`, to compare with what was stored. */
export const testImageBytes = (name: string): Buffer => Buffer.concat([PNG_1X1, Buffer.from(name)]);

/**
 * A local HTTP server handing out small PNGs, for tests, end-to-end runs and benchmarks that publish listings
 * with images (the listing service re-hosts every image it is sent).
 */
export const startImageServer = async (): Promise<ImageServer> => {
  let requests = 0;
  let connections = 0;
  const server = createServer((req, res) => {
    requests++;
    const match = /^\/images\/([A-Za-z0-9_-]+)\.png$/.exec(req.url ?? '');
    if (match?.[1]) {
      res
        .writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' })
        .end(testImageBytes(match[1]));
    } else if (req.url === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an image</html>');
    } else {
      res.writeHead(404).end();
    }
  });
  server.on('connection', () => connections++);
  // Idle connections stay open as long as an image host keeps them (Node's default): the fetcher reuses a
  // connection only when the server announces more than its 2 s margin (`Keep-Alive: timeout=5`).
  server.keepAliveTimeout = 5_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    imageUrl: (name) => `${origin}/images/${name}.png`,
    notAnImageUrl: `${origin}/page.html`,
    requests: () => requests,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
