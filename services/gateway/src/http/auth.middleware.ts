import type { Request, RequestHandler } from 'express';
import { unauthenticated } from '@marketplace/platform';
import type { IdentityService } from '../application/identity.service.js';
import type { Principal } from '../domain/account.js';
import { secretsEqual } from '../domain/api-key.js';

export const API_KEY_HEADER = 'X-MCP-API-Key';

/** The principal of each authenticated request, without widening Express's types. */
const principals = new WeakMap<Request, Principal>();

/**
 * Authenticates the X-MCP-API-Key header on every request (no cache, so a revocation holds at once). With
 * `required`, a missing key is a 401; otherwise a missing key means an anonymous caller. A key that is sent
 * must be valid either way: silently treating a revoked key as anonymous would hide the problem from its owner.
 */
export const authenticateApiKey =
  (identity: IdentityService, { required }: { required: boolean }): RequestHandler =>
  async (req, _res, next) => {
    const presented = req.get(API_KEY_HEADER);
    if (presented === undefined || presented === '') {
      if (required) throw unauthenticated(`the ${API_KEY_HEADER} header is required`);
      next();
      return;
    }
    principals.set(req, await identity.authenticate(presented));
    next();
  };

/** The caller behind the request's API key, when it sent one. */
export const principalOf = (req: Request): Principal | undefined => principals.get(req);

/** The caller of a route mounted behind `authenticateApiKey({ required: true })`. */
export const authenticatedPrincipalOf = (req: Request): Principal => {
  const principal = principals.get(req);
  if (!principal) throw new Error(`${req.method} ${req.path} is not mounted behind required authentication`);
  return principal;
};

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export const requireAdminToken =
  (adminToken: string): RequestHandler =>
  (req, res, next) => {
    const [scheme, token] = (req.get('authorization') ?? '').split(' ', 2);
    if (scheme?.toLowerCase() !== 'bearer' || token === undefined || !secretsEqual(token, adminToken)) {
      res.set('WWW-Authenticate', 'Bearer realm="admin"');
      throw unauthenticated('the admin API needs Authorization: Bearer <ADMIN_TOKEN>');
    }
    next();
  };
