import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { PROBLEM_CONTENT_TYPE, Problems, UNAVAILABLE_RETRY_AFTER_SECONDS } from './problem.js';

export interface HttpDrain {
  /** The server's request listener: `app` while serving; a 503 once draining. */
  readonly listener: RequestListener;
  /**
   * Stops taking work: the server stops accepting connections and closes its idle ones; a request that still
   * arrives (on a connection already open) answers 503; a request in flight is answered with `Connection:
   * close`, and its connection closes after it. Resolves once every connection has closed.
   */
  drain(): Promise<void>;
}

/**
 * The gateway's part of a graceful shutdown (`docs/operations.md`, "Stopping"): between the signal and the exit
 * no request starts work, and no client keeps a connection that would be cut in the middle of its next request.
 */
export const createHttpDrain = (
  server: Server,
  app: RequestListener<typeof IncomingMessage, typeof ServerResponse>,
  publicBaseUrl: string,
): HttpDrain => {
  const problems = new Problems(publicBaseUrl);
  const inFlight = new Set<ServerResponse>();
  let draining = false;

  const refuse = (res: ServerResponse): void => {
    const problem = problems.of(
      'service-unavailable',
      'The marketplace is shutting down; retry in a moment (on another instance, or once it is back).',
    );
    res.writeHead(503, {
      'content-type': PROBLEM_CONTENT_TYPE,
      'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
      connection: 'close',
    });
    res.end(JSON.stringify(problem));
  };

  /** Once draining, every finished exchange leaves an idle connection to close. */
  const closeIdleSoon = (): void => {
    setImmediate(() => server.closeIdleConnections());
  };

  const listener: RequestListener = (req, res) => {
    if (draining) {
      refuse(res);
      res.once('finish', closeIdleSoon);
      return;
    }
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (draining) closeIdleSoon();
    });
    app(req, res);
  };

  return {
    listener,
    drain: async () => {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Node answers `Connection: close` and ends the connection after a response whose header says so.
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      server.closeIdleConnections();
      await closed;
    },
  };
};
