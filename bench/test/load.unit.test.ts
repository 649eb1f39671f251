import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { httpClient, httpGetter, httpPoster } from '../src/catalog/load.js';

describe('HTTP load helpers', () => {
  const seen: { method: string; url: string; length: string | undefined; body: string }[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const server = createServer((req, res) => {
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        length: req.headers['content-length'],
        body,
      });
      setTimeout(() => {
        inFlight--;
        res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ echo: body }));
      }, 5);
    });
  });
  let baseUrl = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('posts the bodies in turn as sized JSON', async () => {
    seen.length = 0;
    const send = httpPoster(baseUrl, '/search', ['{"query":"a"}', '{"query":"bé"}'], 2);
    await Promise.all([send(0), send(1), send(2)]);
    expect(seen.map(({ method, url }) => `${method} ${url}`)).toEqual(Array(3).fill('POST /search'));
    expect(seen.map(({ body }) => body).sort()).toEqual(['{"query":"a"}', '{"query":"a"}', '{"query":"bé"}']);
    expect(seen.find(({ body }) => body.includes('é'))?.length).toBe('15');
  });

  it('gets the paths in turn and rejects a non-2xx answer', async () => {
    seen.length = 0;
    const send = httpGetter(baseUrl, ['/a', '/missing'], 1);
    await send(0);
    await expect(send(1)).rejects.toThrow('status 404');
    expect(seen.map(({ method, url }) => `${method} ${url}`)).toEqual(['GET /a', 'GET /missing']);
  });

  it('answers any status with its body, at most `sockets` requests in flight', async () => {
    mostInFlight = 0;
    const exchange = httpClient(baseUrl, 3);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, n) => exchange({ method: 'POST', path: '/x', body: `${n}` })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    expect(JSON.parse(answers[7]!.text())).toEqual({ echo: '7' });
    expect(mostInFlight).toBeLessThanOrEqual(3);
  });
});
