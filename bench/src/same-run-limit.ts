import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { summarize } from './stats.js';
import { closedLoop, httpClient, openLoop } from './catalog/load.js';
import type { HttpRequest, LoadFigures, Send } from './catalog/load.js';

/**
 * What every HTTP scenario compares itself with, measured in the same run on the same machine: raw `node:http`
 * answering the same requests with a same-sized JSON, in its own process like the gateway. The ratio of the
 * marketplace's throughput to this one says how much of the machine the marketplace's own work takes.
 */

export interface LayerOptions {
  /** Callers of the saturation run. */
  readonly concurrency: number;
  /** Length of each load run. */
  readonly durationMs: number;
}

const figuresOf = (run: LoadFigures) => ({
  requests: run.requests,
  errors: run.errors,
  perSecond: run.perSecond,
  latencyMs: summarize(run.latenciesMs),
});

/** Saturation throughput alone: `concurrency` callers back to back, after a warm-up. */
export const measureSaturation = async (send: Send, options: LayerOptions) => {
  for (let n = 0; n < 200; n++) await send(n); // warm-up: JIT, connections, caches
  return figuresOf(await closedLoop(send, options.concurrency, options.durationMs));
};

/** One layer's figures: saturation throughput, then latencies at half that rate (open loop). */
export const measureLayer = async (send: Send, options: LayerOptions) => {
  const saturation = await measureSaturation(send, options);
  const halfRate = Math.max(1, Math.floor(saturation.perSecond / 2));
  const atHalf = await openLoop(send, halfRate, options.durationMs);
  return { saturation, halfRate, atHalfRate: figuresOf(atHalf) };
};

export type LayerFigures = Awaited<ReturnType<typeof measureLayer>>;

const rawJsonServer = async (body: string): Promise<{ baseUrl: string; stop(): void }> => {
  const child = fork(fileURLToPath(new URL('./raw-json-server.js', import.meta.url)), [body], {
    stdio: 'ignore',
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('raw server did not start in 10 s')), 10_000);
    child.once('message', (message: { port: number }) => {
      clearTimeout(timer);
      resolve(message.port);
    });
  });
  return { baseUrl: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
};

/** Runs `work` against raw node:http answering every request with `body` (given its base URL), then stops it. */
export const withRawJsonServer = async <T>(
  body: string,
  work: (baseUrl: string) => Promise<T>,
): Promise<T> => {
  const raw = await rawJsonServer(body);
  try {
    return await work(raw.baseUrl);
  } finally {
    raw.stop();
  }
};

/**
 * The limit layer: the same load (`sendTo` builds it for a base URL) against raw node:http answering every
 * request with `body`.
 */
export const rawHttpLayer = (
  body: string,
  sendTo: (baseUrl: string) => Send,
  options: LayerOptions,
): Promise<LayerFigures> => withRawJsonServer(body, (baseUrl) => measureLayer(sendTo(baseUrl), options));

/** The body of one real answer, for the raw server to serve at the same size. */
export const sampleAnswer = async (baseUrl: string, request: HttpRequest): Promise<string> => {
  const answer = await httpClient(baseUrl, 1)(request);
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(`${request.path} answered ${answer.status}: ${answer.text()}`);
  }
  return answer.text();
};

/**
 * A throughput as a share of its limit's, to three significant digits (1 would be as fast as the limit; a share
 * of 0.0015 must not read 0.001).
 */
export const throughputRatio = (measuredPerSecond: number, limitPerSecond: number): number =>
  Number((measuredPerSecond / Math.max(1, limitPerSecond)).toPrecision(3));

/** The marketplace's saturation throughput as a share of the limit's (1 would be as fast as raw node:http). */
export const ratioToLimit = (measured: LayerFigures, limit: LayerFigures): number =>
  throughputRatio(measured.saturation.perSecond, limit.saturation.perSecond);
