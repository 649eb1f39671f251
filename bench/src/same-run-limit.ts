import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
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

/**
 * One layer's figures: saturation throughput, then latencies at half that rate (open loop), with how late the
 * generator's own event loop ran meanwhile: a generator paused (by a collection of its own heap, or by the
 * machine) sends late, and its pause lands in the layer's tail, so a tail is only the layer's when this is small.
 */
export const measureLayer = async (send: Send, options: LayerOptions) => {
  const saturation = await measureSaturation(send, options);
  const halfRate = Math.max(1, Math.floor(saturation.perSecond / 2));
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const atHalf = await openLoop(send, halfRate, options.durationMs);
  loopDelay.disable();
  const ms = (nanoseconds: number): number => Math.round(nanoseconds / 1e5) / 10;
  return {
    saturation,
    halfRate,
    atHalfRate: {
      ...figuresOf(atHalf),
      generatorLoopDelayMs: { p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
    },
  };
};

export type LayerFigures = Awaited<ReturnType<typeof measureLayer>>;

/** HTTP requests a load generator sends in turn to one server. */
export interface HttpLoad {
  readonly baseUrl: string;
  readonly requests: readonly HttpRequest[];
}

/**
 * Forks `entry` (its errors on this process's stderr), sends it `job` if given, and resolves with the first
 * message it sends back; rejects if it exits first or sends nothing within `timeoutMs`.
 */
export const forkedResult = async <T>(
  entry: string,
  args: readonly string[],
  timeoutMs: number,
  job?: object,
): Promise<{ child: ChildProcess; result: T }> => {
  const child = fork(fileURLToPath(new URL(entry, import.meta.url)), args, {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const abort = new AbortController();
  const failure = Promise.race([
    once(child, 'exit', { signal: abort.signal }).then(([code]) => `exited (${String(code)})`),
    sleep(timeoutMs, undefined, { signal: abort.signal }).then(() => `sent nothing in ${timeoutMs} ms`),
  ]).then((why) => {
    child.kill('SIGKILL');
    throw new Error(`${entry} ${why}`);
  });
  if (job !== undefined) child.send(job);
  try {
    const [result] = (await Promise.race([once(child, 'message'), failure])) as [T];
    return { child, result };
  } finally {
    abort.abort();
    failure.catch(() => undefined);
  }
};

/**
 * `measureLayer` of an HTTP layer from a load generator in its own process (`load-generator.ts`), whose heap
 * holds only the requests: the bench process holds 100,000 generated listings or an index being measured, and
 * its collections would otherwise pause the generator and be counted as the layer's latency.
 */
export const measureHttpLayer = async (load: HttpLoad, options: LayerOptions): Promise<LayerFigures> => {
  // Warm-up, saturation and half-rate runs, with a minute to spare for slow answers.
  const timeoutMs = 2 * options.durationMs + 60_000;
  return (await forkedResult<LayerFigures>('./load-generator.js', [], timeoutMs, { load, options })).result;
};

const rawJsonServer = async (body: string): Promise<{ baseUrl: string; stop(): void }> => {
  const { child, result } = await forkedResult<{ port: number }>('./raw-json-server.js', [body], 10_000);
  return { baseUrl: `http://127.0.0.1:${result.port}`, stop: () => child.kill('SIGTERM') };
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
