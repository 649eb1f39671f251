import { describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordRequestTimings } from '../src/edge/http/request-timings.js';

describe('recording the latencies of the requests the gateway answers (recordRequestTimings)', () => {
  it('records answered requests in a bounded ring, leaving out ignored paths and event streams', async () => {
    const timings = recordRequestTimings({ capacity: 3, ignore: (path) => path.startsWith('/imports') });
    const server = createServer((req, res) => {
      const delayMs = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
      setTimeout(() => {
        if (req.url?.startsWith('/stream')) res.setHeader('content-type', 'text/event-stream');
        res.end('ok');
      }, delayMs);
    });
    server.on('request', timings.listener);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const started = performance.now();
      await fetch(`${base}/search?ms=200`).then((res) => res.text());
      await fetch(`${base}/imports?ms=5`).then((res) => res.text());
      await fetch(`${base}/stream?ms=5`).then((res) => res.text());
      const now = performance.now();
      const [one] = timings.within(started, now);
      expect(timings.within(started, now)).toHaveLength(1);
      // Far apart (200 ms against 1 ms), so neither a timer fired early by a stale loop clock nor a loaded
      // machine makes one look like the other.
      expect(one).toBeGreaterThanOrEqual(150);
      expect(timings.overlapping(now, now + 1)).toEqual([]);
      // Four more: the ring keeps the latest three.
      for (let n = 0; n < 4; n++) await fetch(`${base}/search?ms=1`).then((res) => res.text());
      const all = timings.overlapping(started, performance.now());
      expect(all).toHaveLength(3);
      expect(all.every((latency) => latency < 150)).toBe(true);
    } finally {
      server.close();
    }
  });
});
