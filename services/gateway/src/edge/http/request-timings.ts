import type { IncomingMessage, ServerResponse } from 'node:http';

/** One answered request: when the gateway got it and when it finished answering (`performance.now()`). */
export interface RequestTiming {
  readonly startMs: number;
  readonly endMs: number;
}

export interface RequestTimings {
  /** The server's `request` listener: records the request once its answer has been sent. */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** The latencies (ms) of the recorded requests that overlapped [fromMs, toMs]. */
  overlapping(fromMs: number, toMs: number): number[];
  /** The latencies (ms) of the recorded requests that started and finished within [fromMs, toMs]. */
  within(fromMs: number, toMs: number): number[];
}

/**
 * The latencies of the latest requests the gateway answered, for the import's pacing (docs/imports.md,
 * "Pacing"): a ring of `capacity` timings, so recording costs the same at any rate. Requests `ignore`d (the
 * imports' own routes) and streams (an MCP session's events stay open for minutes) are not recorded; neither is
 * a request whose client left before its answer.
 */
export const recordRequestTimings = (options: {
  readonly capacity: number;
  readonly ignore: (path: string) => boolean;
}): RequestTimings => {
  const ring: RequestTiming[] = [];
  let next = 0;
  const latencies = (keep: (timing: RequestTiming) => boolean): number[] =>
    ring.filter(keep).map((timing) => timing.endMs - timing.startMs);
  return {
    listener: (req, res) => {
      if (options.ignore(req.url ?? '')) return;
      const startMs = performance.now();
      res.once('finish', () => {
        if (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) return;
        ring[next] = { startMs, endMs: performance.now() };
        next = (next + 1) % options.capacity;
      });
    },
    overlapping: (fromMs, toMs) => latencies((timing) => timing.endMs >= fromMs && timing.startMs <= toMs),
    within: (fromMs, toMs) => latencies((timing) => timing.startMs >= fromMs && timing.endMs <= toMs),
  };
};
