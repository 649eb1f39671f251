import { Agent, request } from 'node:http';

/** One request of a load run: resolves when the whole answer arrived; rejects on a non-2xx or an error. */
export type Send = (n: number) => Promise<void>;

export interface HttpRequest {
  readonly method?: 'GET' | 'POST';
  /** Path and query, resolved against the client's base URL. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface HttpAnswer {
  readonly status: number;
  /** The answer's body, decoded only when asked: load runs that only count answers skip the work. */
  text(): string;
}

/** One request and its answer. */
export type HttpExchange = (request: HttpRequest) => Promise<HttpAnswer>;

/**
 * A keep-alive HTTP client of one server: at most `sockets` requests in flight (the agent queues the others),
 * each bounded by `timeoutMs` of socket inactivity. Resolves with any status; rejects on a network error.
 */
export const httpClient = (baseUrl: string, sockets: number, timeoutMs = 10_000): HttpExchange => {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  return ({ method = 'GET', path, headers = {}, body }) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      // A known length, as clients send a JSON body (not chunked).
      const sized = body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) };
      const options = { agent, method, headers: sized, timeout: timeoutMs };
      const req = request(new URL(path, baseUrl), options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: () => Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', reject);
      req.end(body);
    });
};

/** A load run's request: a non-2xx answer is an error. */
const sender =
  (exchange: HttpExchange, requestOf: (n: number) => HttpRequest): Send =>
  async (n) => {
    const { status } = await exchange(requestOf(n));
    if (status < 200 || status >= 300) throw new Error(`status ${status}`);
  };

/** GETs of `paths`. */
export const getRequests = (paths: readonly string[]): HttpRequest[] => paths.map((path) => ({ path }));

/** POSTs of the JSON `bodies` to one path. */
export const postRequests = (path: string, bodies: readonly string[]): HttpRequest[] =>
  bodies.map((body) => ({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body }));

/** A keep-alive client sending `requests` in turn to one HTTP server, each bounded by `timeoutMs`. */
export const httpSender = (
  baseUrl: string,
  requests: readonly HttpRequest[],
  sockets: number,
  timeoutMs = 10_000,
): Send => sender(httpClient(baseUrl, sockets, timeoutMs), (n) => requests[n % requests.length]!);

/** A keep-alive GET of `paths` in turn against one HTTP server, each request bounded by `timeoutMs`. */
export const httpGetter = (
  baseUrl: string,
  paths: readonly string[],
  sockets: number,
  timeoutMs = 10_000,
): Send => httpSender(baseUrl, getRequests(paths), sockets, timeoutMs);

/** A keep-alive POST of the JSON `bodies` in turn to one path, each request bounded by `timeoutMs`. */
export const httpPoster = (
  baseUrl: string,
  path: string,
  bodies: readonly string[],
  sockets: number,
  timeoutMs = 10_000,
): Send => httpSender(baseUrl, postRequests(path, bodies), sockets, timeoutMs);

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
