import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createGuardedFetcher, type GuardedFetcher } from '../src/guarded-fetcher.js';
import { OutboundFetchError, type OutboundFetchFailure } from '../src/outbound-fetch.error.js';

const LOOPBACK_ONLY = { cidrs: ['127.0.0.0/8'] };

const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/image': (_req, res) =>
    res.writeHead(200, { 'content-type': 'image/png; charset=binary' }).end(Buffer.from('png!')),
  '/big': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(2_048)),
  '/big-chunked': (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    for (let i = 0; i < 4; i++) res.write(Buffer.alloc(512));
    res.end();
  },
  '/slow': (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.write('x');
  },
  '/missing': (_req, res) => res.writeHead(404).end(),
  '/redirect/0': (_req, res) => res.writeHead(302, { location: '/image' }).end(),
  '/to-metadata': (_req, res) =>
    res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end(),
  '/to-file': (_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end(),
};
// /redirect/<n> takes n + 1 redirects to reach /image.
for (let hop = 1; hop <= 3; hop++) {
  routes[`/redirect/${hop}`] = (_req, res) => res.writeHead(301, { location: `/redirect/${hop - 1}` }).end();
}

const expectRefusal = async (promise: Promise<unknown>, reason: OutboundFetchFailure): Promise<void> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OutboundFetchError);
  expect((error as OutboundFetchError).reason).toBe(reason);
};

describe('guarded fetcher against a local HTTP server', () => {
  let server: Server;
  let origin: string;
  let port: number;
  const fetchers: GuardedFetcher[] = [];
  const fetcherWith = (options: Parameters<typeof createGuardedFetcher>[0]): GuardedFetcher => {
    const fetcher = createGuardedFetcher(options);
    fetchers.push(fetcher);
    return fetcher;
  };

  beforeAll(async () => {
    server = createServer((req, res) => (routes[req.url ?? ''] ?? routes['/missing']!)(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    origin = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await Promise.all(fetchers.map((fetcher) => fetcher.close()));
    server.closeAllConnections();
    server.close();
  });

  it('fetches from an allow-listed address, with the content type and the final URL', async () => {
    const fetched = await fetcherWith({ allowList: LOOPBACK_ONLY }).fetch(`${origin}/redirect/2`);
    expect(fetched).toEqual({ url: `${origin}/image`, contentType: 'image/png', body: Buffer.from('png!') });
  });

  it('refuses loopback without the allow-list, as a literal and as a name that resolves to it', async () => {
    const fetcher = fetcherWith({});
    await expectRefusal(fetcher.fetch(`${origin}/image`), 'forbidden_address');
    await expectRefusal(fetcher.fetch(`http://localhost:${port}/image`), 'forbidden_address');
    await expectRefusal(fetcher.fetch(`http://[::ffff:127.0.0.1]:${port}/image`), 'forbidden_address');
  });

  it('connects to the address it checked: one resolution per connection, so DNS rebinding cannot swap it', async () => {
    let resolutions = 0;
    // A rebinding name: the first answer is the permitted address, every later one an address the policy refuses.
    const rebinding = fetcherWith({
      allowList: { cidrs: ['127.0.0.1/32'] },
      resolve: async () => [{ address: resolutions++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }],
    });
    const fetched = await rebinding.fetch(`http://rebind.example:${port}/image`);
    expect(fetched.body.toString()).toBe('png!');
    expect(resolutions).toBe(1);
  });

  it('connects to the permitted address of a name that resolves to a private and a public one', async () => {
    const fetched = await fetcherWith({
      allowList: { cidrs: ['127.0.0.1/32'] },
      resolve: async () => [
        { address: '10.0.0.1', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
    }).fetch(`http://mixed.example:${port}/image`);
    expect(fetched.body.toString()).toBe('png!');
  });

  it('lets an allow-listed host name through whatever it resolves to', async () => {
    const fetched = await fetcherWith({ allowList: { hosts: ['localhost'] } }).fetch(
      `http://localhost:${port}/image`,
    );
    expect(fetched.contentType).toBe('image/png');
  });

  it('checks every redirect: a hop to a link-local address or a non-http scheme is refused', async () => {
    const fetcher = fetcherWith({ allowList: LOOPBACK_ONLY });
    await expectRefusal(fetcher.fetch(`${origin}/to-metadata`), 'forbidden_address');
    await expectRefusal(fetcher.fetch(`${origin}/to-file`), 'bad_url');
  });

  it('follows at most 3 redirects', async () => {
    await expectRefusal(
      fetcherWith({ allowList: LOOPBACK_ONLY }).fetch(`${origin}/redirect/3`),
      'too_many_redirects',
    );
  });

  it('refuses bodies over the size limit, declared or streamed', async () => {
    const fetcher = fetcherWith({ allowList: LOOPBACK_ONLY, maxBytes: 1_024 });
    await expectRefusal(fetcher.fetch(`${origin}/big`), 'too_large');
    await expectRefusal(fetcher.fetch(`${origin}/big-chunked`), 'too_large');
  });

  it('gives up after the time limit', async () => {
    await expectRefusal(
      fetcherWith({ allowList: LOOPBACK_ONLY, timeoutMs: 200 }).fetch(`${origin}/slow`),
      'timeout',
    );
  });

  it('gives up when the caller’s signal aborts, before the time limit, and at once when it already has', async () => {
    const fetcher = fetcherWith({ allowList: LOOPBACK_ONLY, timeoutMs: 10_000 });
    const started = performance.now();
    await expectRefusal(fetcher.fetch(`${origin}/slow`, { signal: AbortSignal.timeout(200) }), 'cancelled');
    expect(performance.now() - started).toBeLessThan(5_000);
    await expectRefusal(fetcher.fetch(`${origin}/image`, { signal: AbortSignal.abort() }), 'cancelled');
  });

  it('refuses other schemes, relative URLs and error statuses', async () => {
    const fetcher = fetcherWith({ allowList: LOOPBACK_ONLY });
    await expectRefusal(fetcher.fetch('ftp://example.com/a.png'), 'bad_url');
    await expectRefusal(fetcher.fetch('/image'), 'bad_url');
    await expectRefusal(fetcher.fetch(`${origin}/missing`), 'http_status');
  });

  it('reports an unreachable server as a network failure', async () => {
    await expectRefusal(
      fetcherWith({ allowList: LOOPBACK_ONLY }).fetch('http://127.0.0.1:1/image'),
      'network',
    );
  });
});
