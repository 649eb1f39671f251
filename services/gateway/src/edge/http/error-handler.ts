import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { Logger } from '@marketplace/platform';
import type { Problem, Problems } from './problem.js';
import { sendProblem } from './problem.js';
import { requestIdOf } from './request-log.js';

/** Every route that matched nothing: a 404 problem, never Express's HTML page. */
export const notFoundFallback =
  (problems: Problems): RequestHandler =>
  (req, res) => {
    sendProblem(res, problems.of('not-found', `no route for ${req.method} ${req.path}`));
  };

/** How an edge answers what a handler threw: a client error or transient fault as a problem, a real fault. */
export interface ErrorRendering {
  readonly problem: (res: Response, problem: Problem, error: unknown) => void;
  readonly fault: (req: Request, res: Response) => void;
}

/**
 * The one shape of the gateway's error middleware: what a handler threw becomes a problem; a problem of 5xx is
 * logged as a warning, anything else is a real fault, logged with the request id. Each edge (problem documents,
 * JSON-RPC, ACP) only renders.
 */
export const errorHandler =
  (problems: Problems, logger: Logger, render: ErrorRendering): ErrorRequestHandler =>
  (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const problem = problems.fromError(error);
    if (problem === undefined) {
      logger.error({ err: error, requestId: requestIdOf(req) }, 'unexpected error while handling a request');
      render.fault(req, res);
      return;
    }
    if (problem.status >= 500)
      logger.warn({ requestId: requestIdOf(req), detail: problem.detail }, problem.title);
    render.problem(res, problem, error);
  };

/** The last middleware: what a handler threw becomes a problem document; a fault a bare 500. */
export const problemErrorHandler = (problems: Problems, logger: Logger): ErrorRequestHandler =>
  errorHandler(problems, logger, {
    problem: (res, problem) => sendProblem(res, problem),
    fault: (req, res) =>
      sendProblem(
        res,
        problems.of('internal-error', `mention request id ${requestIdOf(req)} when reporting this`),
      ),
  });
