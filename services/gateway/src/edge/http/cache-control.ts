import type { RequestHandler } from 'express';

/**
 * Every answer is `Cache-Control: no-store` unless its route says otherwise: orders, a seller's hidden
 * listings, subscriptions and their unsubscribe tokens, keys and whatever an authenticated caller reads must
 * never sit in a shared or browser cache. The public documents and images set their own policy.
 */
export const noStoreByDefault: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
};
