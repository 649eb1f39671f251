import { randomBytes } from 'node:crypto';
import express from 'express';
import type { Express } from 'express';
import helmet from 'helmet';
import { httpServerTelemetry } from '@marketplace/telemetry';
import type { BlobStore } from '@marketplace/blobstore';
import type { Logger } from '@marketplace/platform';
import type { IdentityService } from '../contexts/identity/identity.service.js';
import type { BackendClients } from './contexts.js';
import { openContexts } from './contexts.js';
import type { ListingImports } from '../contexts/listings/imports.routes.js';
import { ProductViews } from './product.views.js';
import { registryOf } from './mcp/registry.js';
import { McpDispatcher } from './mcp/dispatcher.js';
import { marketplaceResources } from './mcp/marketplace.resources.js';
import { mcpRoutes } from './mcp/mcp.routes.js';
import type { McpSessions } from './mcp/mcp-sessions.js';
import { notFoundFallback, problemErrorHandler } from './http/error-handler.js';
import { Problems } from './http/problem.js';
import { requestLog } from './http/request-log.js';
import { noStoreByDefault } from './http/cache-control.js';
import { refuseHostileQuery } from './http/hostile-query.js';
import { asyncApiRoutes } from './discovery/asyncapi.routes.js';
import { discoveryRoutes } from './discovery/discovery.routes.js';
import { ephemeralSigningKey } from '@marketplace/platform';
import type { SigningKey } from '@marketplace/platform';
import type { ReadinessReport } from './http/health.routes.js';
import { healthRoutes } from './http/health.routes.js';
import { imagesRoutes } from './http/images.routes.js';
import { policiesRoutes } from './discovery/policies.routes.js';
import { serviceIndexRoutes } from './discovery/service-index.routes.js';
import { openApiRoutes } from './discovery/openapi.routes.js';
import { problemsRoutes } from './http/problems.routes.js';
import { authenticate, principalOf } from './http/auth.middleware.js';
import {
  catalogReadLimit,
  clientAddressContext,
  clientAddressOfRequest,
  RateLimiter,
  rateLimit,
} from './http/rate-limit.js';
import { UCP_SHOPPING_PATH } from './ucp.js';

/** Bodies are small JSON documents: a full listing with 10,000 escaped characters stays far below this. */
export const DEFAULT_BODY_LIMIT_BYTES = 256 * 1024;

export interface GatewayDependencies extends BackendClients {
  readonly identity: IdentityService;
  /** Counts catalog reads and quote requests; absent: no limits. */
  readonly rateLimiter?: RateLimiter | undefined;
  /** Reverse proxies in front setting X-Forwarded-For (`trust proxy`), for the client IP; default 0. */
  readonly trustProxyHops?: number | undefined;
  /** The re-hosted listing images served at /images/. */
  readonly images: BlobStore;
  readonly logger: Logger;
  /** `{base_url}` of links, Location headers and problem types, without a trailing slash. */
  readonly publicBaseUrl: string;
  /** Unset: the admin API does not exist (404). */
  readonly adminToken?: string | undefined;
  readonly readiness: () => Promise<ReadinessReport>;
  readonly bodyLimitBytes?: number;
  /** Signs checkout confirmation tokens (every replica needs the same); unset: a random one per start. */
  readonly confirmationKey?: Buffer | undefined;
  /** The spreadsheet imports (docs/imports.md); unset: their routes answer 503. */
  readonly listingImports?: ListingImports | undefined;
  /** The marketplace signing key published in /.well-known/ucp; unset: a random one per start. */
  readonly signingKey?: SigningKey | undefined;
  /** The MCP sessions of this replica (resource subscriptions); unset: /mcp is stateless only. */
  readonly mcpSessions?: McpSessions | undefined;
}

/**
 * The gateway's HTTP surface: security headers on every answer, the routes, and RFC 9457 problem documents
 * for every error (unknown routes, wrong methods and bodies included).
 */
export const createGatewayApp = (deps: GatewayDependencies): Express => {
  const publicBaseUrl = deps.publicBaseUrl.replace(/\/+$/, '');
  const bodyLimitBytes = deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const problems = new Problems(publicBaseUrl);
  const views = new ProductViews(publicBaseUrl);

  const app = express();
  app.disable('x-powered-by');
  // First: the request's span (and the caller's trace) is active for everything below, log lines included.
  app.use(httpServerTelemetry());
  app.use(requestLog(deps.logger));
  app.set('trust proxy', deps.trustProxyHops ?? 0);
  app.use(clientAddressContext);
  app.use(noStoreByDefault);
  app.use(refuseHostileQuery);
  const rateLimiter = deps.rateLimiter ?? RateLimiter.off();
  app.use(
    helmet({
      // A JSON API loads nothing and is never framed.
      contentSecurityPolicy: {
        useDefaults: false,
        directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
      },
      frameguard: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
    }),
  );
  app.use(healthRoutes(problems, deps.readiness));
  app.use(problemsRoutes(problems));
  app.use(imagesRoutes(problems, deps.images));
  app.use(
    ['/api/ucp/catalog', `${UCP_SHOPPING_PATH}/catalog`],
    ...catalogReadLimit(authenticate(deps.identity, { required: false }), rateLimiter),
  );
  const contexts = openContexts(
    {
      problems,
      identity: deps.identity,
      views,
      rateLimiter,
      logger: deps.logger,
      publicBaseUrl,
      bodyLimitBytes,
      adminToken: deps.adminToken,
    },
    deps,
    { confirmationKey: deps.confirmationKey ?? randomBytes(32), listingImports: deps.listingImports },
  );
  for (const context of contexts.surfaces) app.use(...context.routes);
  const tools = registryOf(contexts.surfaces.flatMap((context) => context.tools));
  const mcpResources = marketplaceResources({
    catalog: contexts.catalog.queries,
    subscriptions: contexts.subscriptions.commands,
    quoteRequestsSince: contexts.quoteRequestsSince,
  });
  const dispatcher = new McpDispatcher(tools, mcpResources, deps.logger, {
    quoteRequestIds: contexts.ownQuoteRequestIds,
    sellerProductIds: contexts.ownProductIds,
  });
  app.use(discoveryRoutes(problems, dispatcher, publicBaseUrl, deps.signingKey ?? ephemeralSigningKey()));
  app.use(openApiRoutes(problems, publicBaseUrl));
  app.use(asyncApiRoutes(problems, publicBaseUrl));
  app.use(policiesRoutes(problems, publicBaseUrl));
  app.use(serviceIndexRoutes(problems, publicBaseUrl));
  app.use(
    mcpRoutes({
      dispatcher,
      identity: deps.identity,
      problems,
      logger: deps.logger,
      publicBaseUrl,
      behindProxy: (deps.trustProxyHops ?? 0) > 0,
      sessions: deps.mcpSessions,
      rateLimit: rateLimit(rateLimiter, (req) =>
        rateLimiter.catalogChecks(principalOf(req), clientAddressOfRequest(req)),
      ),
    }),
  );
  app.use(notFoundFallback(problems));
  app.use(problemErrorHandler(problems, deps.logger));
  return app;
};
