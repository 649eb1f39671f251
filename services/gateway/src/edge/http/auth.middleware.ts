import type { Request, RequestHandler } from 'express';
import { unauthenticated } from '@marketplace/platform';
import type { IdentityService } from '../../contexts/identity/identity.service.js';
import type { Principal } from '../account.js';
import { API_KEY_BRAND, secretsEqual } from '../../contexts/identity/domain/api-key.js';

/**
 * The identity context's service, as every context sees it: the one way to authenticate a caller. Contexts take
 * it from here, never from contexts/identity/ (docs/architecture.md, "Gateway").
 */
export type { IdentityService };

export const API_KEY_HEADER = 'X-MCP-API-Key';
export const AGENT_TOKEN_HEADER = 'X-Agent-Token';

/** The principal of each authenticated request, without widening Express's types. */
const principals = new WeakMap<Request, Principal>();

const presentedHeader = (req: Request, name: string): string | undefined => {
  const value = req.get(name);
  return value === undefined || value === '' ? undefined : value;
};

/**
 * Authenticates the caller of every request by its X-MCP-API-Key or its X-Agent-Token (no cache, so a key's
 * revocation holds at once). With `required`, a request with neither is a 401; otherwise it is anonymous. A
 * credential that is sent must be valid either way: silently treating a revoked key as anonymous would hide the
 * problem from its owner. Sending both is refused, so there is never a question of which one acts.
 */
export const authenticate =
  (identity: IdentityService, { required }: { required: boolean }): RequestHandler =>
  async (req, _res, next) => {
    const apiKey = presentedHeader(req, API_KEY_HEADER);
    const agentToken = presentedHeader(req, AGENT_TOKEN_HEADER);
    if (apiKey !== undefined && agentToken !== undefined) {
      throw unauthenticated(`send either ${API_KEY_HEADER} or ${AGENT_TOKEN_HEADER}, not both`);
    }
    if (apiKey !== undefined) principals.set(req, await identity.authenticate(apiKey));
    else if (agentToken !== undefined) principals.set(req, await identity.authenticateAgentToken(agentToken));
    else if (required) {
      throw unauthenticated(`the ${API_KEY_HEADER} header (or a buyer's ${AGENT_TOKEN_HEADER}) is required`);
    }
    next();
  };

/** The caller behind the request's API key or agent token, when it sent one; `credential` says which. */
export const principalOf = (req: Request): Principal | undefined => principals.get(req);

/** The caller of a route mounted behind `authenticate({ required: true })`. */
export const authenticatedPrincipalOf = (req: Request): Principal => {
  const principal = principals.get(req);
  if (!principal) throw new Error(`${req.method} ${req.path} is not mounted behind required authentication`);
  return principal;
};

const BEARER = /^Bearer (\S+)$/i;

/**
 * ACP's `Authorization: Bearer <credential>` (docs/protocols.md §3.2): the credential is the buyer's
 * API key (`lmk_…`) or an agent token, authenticated as `authenticate` does with X-MCP-API-Key or X-Agent-Token,
 * which are also taken. A request with no credential at all is a 401.
 */
export const authenticateBearer =
  (identity: IdentityService): RequestHandler =>
  async (req, res, next) => {
    const authorization = req.get('authorization');
    if (authorization === undefined || authorization === '') {
      await authenticate(identity, { required: true })(req, res, next);
      return;
    }
    if (
      presentedHeader(req, API_KEY_HEADER) !== undefined ||
      presentedHeader(req, AGENT_TOKEN_HEADER) !== undefined
    ) {
      throw unauthenticated(`send one credential: Authorization, ${API_KEY_HEADER} or ${AGENT_TOKEN_HEADER}`);
    }
    const credential = BEARER.exec(authorization)?.[1];
    if (credential === undefined)
      throw unauthenticated('Authorization must be Bearer <API key or agent token>');
    principals.set(
      req,
      credential.startsWith(`${API_KEY_BRAND}_`)
        ? await identity.authenticate(credential)
        : await identity.authenticateAgentToken(credential),
    );
    next();
  };

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export const requireAdminToken =
  (adminToken: string): RequestHandler =>
  (req, res, next) => {
    // The whole header is the scheme and one token (RFC 6750 2.1): `Bearer <token> junk` is not the token.
    const token = BEARER.exec(req.get('authorization') ?? '')?.[1];
    if (token === undefined || !secretsEqual(token, adminToken)) {
      res.set('WWW-Authenticate', 'Bearer realm="admin"');
      throw unauthenticated('the admin API needs Authorization: Bearer <ADMIN_TOKEN>');
    }
    next();
  };
