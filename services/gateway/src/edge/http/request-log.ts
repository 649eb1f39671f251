import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '@marketplace/platform';
import { principalOf } from './auth.middleware.js';

const requestIds = new WeakMap<Request, string>();

/** A caller's own X-Request-Id is kept when it is a plain token; anything else gets a fresh UUID. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

/** A whole API key pasted into a path (by mistake, e.g. when revoking) is cut down to its prefix. */
const KEY_IN_PATH = /(lmk_[a-z2-7]{8})_[A-Za-z0-9_-]+/g;

export const requestIdOf = (req: Request): string => requestIds.get(req) ?? 'unknown';

/**
 * One structured line per request, written when the response finishes: method, path (without the query),
 * status, duration, request id and the caller's account id. Headers and bodies are never logged, so neither
 * API keys nor admin tokens can reach the log.
 */
export const requestLog =
  (logger: Logger): RequestHandler =>
  (req, res, next) => {
    const offered = req.get('x-request-id');
    const requestId = offered !== undefined && ACCEPTABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
    requestIds.set(req, requestId);
    res.set('X-Request-Id', requestId);
    const startedAt = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info(
        {
          requestId,
          method: req.method,
          path: (req.originalUrl.split('?')[0] ?? '').replace(KEY_IN_PATH, '$1_[redacted]'),
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - startedAt) / 1e6,
          accountId: principalOf(req)?.accountId,
        },
        'request',
      );
    });
    next();
  };
