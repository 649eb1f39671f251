import { Agent, request } from 'node:http';

/** One request of a load run: resolves when the whole answer arrived; rejects on a non-2xx or an error. */
export type Send = (n: number) => Promise<void>;

/** A keep-alive GET against one HTTP server, each request bounded by `timeoutMs`. */
export const httpGetter = (
  baseUrl: string,
  paths: readonly string[],
  sockets: number,
  timeoutMs = 10_000,
): Send => {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  return (n) =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        new URL(paths[n % paths.length]!, baseUrl),
        { agent, timeout: timeoutMs },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () =>
            res.statusCode !== undefined && res.statusCode < 300
              ? resolve()
              : reject(new Error(`status ${res.statusCode}`)),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', reject);
      req.end();
    });
};

export interface LoadFigures {
  readonly requests: number;
  readonly errors: number;
  readonly perSecond: number;
  readonly latenciesMs: number[];
}

/** Saturation: `concurrency` callers each send the next request as soon as the previous answered. */
export const closedLoop = async (
  send: Send,
  concurrency: number,
  durationMs: number,
): Promise<LoadFigures> => {
  const latenciesMs: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const caller = async (): Promise<void> => {
    while (performance.now() - started < durationMs) {
      const sent = performance.now();
      try {
        await send(next++);
        latenciesMs.push(performance.now() - sent);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const seconds = (performance.now() - started) / 1000;
  return {
    requests: latenciesMs.length,
    errors,
    perSecond: Math.round(latenciesMs.length / seconds),
    latenciesMs,
  };
};

/**
 * A fixed rate: request `n` is due at `n / rate` seconds, and its latency counts from when it was due, so a
 * stalled server is not hidden by the load generator waiting for it (no coordinated omission).
 */
export const openLoop = async (
  send: Send,
  ratePerSecond: number,
  durationMs: number,
): Promise<LoadFigures> => {
  const latenciesMs: number[] = [];
  let errors = 0;
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.floor((ratePerSecond * durationMs) / 1000);
  for (let n = 0; n < total; n++) {
    const due = started + (n * 1000) / ratePerSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(
      send(n).then(
        () => void latenciesMs.push(performance.now() - due),
        () => void errors++,
      ),
    );
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  return {
    requests: latenciesMs.length,
    errors,
    perSecond: Math.round(latenciesMs.length / seconds),
    latenciesMs,
  };
};
