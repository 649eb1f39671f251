import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@marketplace/platform';
import type { Problems } from './problem.js';
import { sendProblem } from './problem.js';
import { requestIdOf } from './request-log.js';

/** Every route that matched nothing: a 404 problem, never Express's HTML page. */
export const notFoundFallback =
  (problems: Problems): RequestHandler =>
  (req, res) => {
    sendProblem(res, problems.of('not-found', `no route for ${req.method} ${req.path}`));
  };

/**
 * The last middleware: what a handler threw becomes a problem document. Client errors answer with their
 * status; anything else is a real fault, logged with the request id and answered as a bare 500.
 */
export const problemErrorHandler =
  (problems: Problems, logger: Logger): ErrorRequestHandler =>
  (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const problem = problems.fromError(error);
    if (problem) {
      if (problem.status >= 500)
        logger.warn({ requestId: requestIdOf(req), detail: problem.detail }, problem.title);
      sendProblem(res, problem);
      return;
    }
    logger.error({ err: error, requestId: requestIdOf(req) }, 'unexpected error while handling a request');
    sendProblem(
      res,
      problems.of('internal-error', `mention request id ${requestIdOf(req)} when reporting this`),
    );
  };
