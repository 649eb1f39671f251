import { randomBytes } from 'node:crypto';
import express from 'express';
import type { Express } from 'express';
import helmet from 'helmet';
import { httpServerTelemetry } from '@marketplace/telemetry';
import type { BlobStore } from '@marketplace/blobstore';
import type { Logger } from '@marketplace/platform';
import { CatalogQueries } from '../application/catalog.queries.js';
import type { IdentityService } from '../application/identity.service.js';
import { ListingCommands } from '../application/listing.commands.js';
import { ProductViews } from '../application/product.views.js';
import { createToolRegistry } from '../application/tools/registry.js';
import { QuotePurchases } from '../application/quote-purchases.js';
import { CheckoutConfirmations } from '../application/checkout-confirmations.js';
import { checkoutConfirmationRoutes } from './routes/checkout-confirmation.routes.js';
import type { CatalogClient } from '../clients/catalog.client.js';
import type { SubscriptionClient } from '../clients/subscription.client.js';
import { SubscriptionCommands } from '../application/subscription.commands.js';
import type { ListingClient } from '../clients/listing.client.js';
import { McpDispatcher } from '../mcp/dispatcher.js';
import { marketplaceResources } from '../mcp/marketplace.resources.js';
import { mcpRoutes } from '../mcp/mcp.routes.js';
import { notFoundFallback, problemErrorHandler } from './error-handler.js';
import { Problems } from './problem.js';
import { requestLog } from './request-log.js';
import { noStoreByDefault } from './cache-control.js';
import { refuseHostileQuery } from './hostile-query.js';
import { adminRoutes } from './routes/admin.routes.js';
import { adminDisputesRoutes } from './routes/admin-disputes.routes.js';
import { sellerWebhooksRoutes } from './routes/seller-webhooks.routes.js';
import { SellerWebhooks } from '../application/seller-webhooks.js';
import { asyncApiRoutes } from './routes/asyncapi.routes.js';
import { agentTokensRoutes } from './routes/agent-tokens.routes.js';
import { catalogRoutes } from './routes/catalog.routes.js';
import { discoveryRoutes } from './routes/discovery.routes.js';
import { feedRoutes } from './routes/feed.routes.js';
import type { ReadinessReport } from './routes/health.routes.js';
import { healthRoutes } from './routes/health.routes.js';
import { imagesRoutes } from './routes/images.routes.js';
import { policiesRoutes } from './routes/policies.routes.js';
import { serviceIndexRoutes } from './routes/service-index.routes.js';
import { markdownRoutes } from './routes/markdown.routes.js';
import { openApiRoutes } from './routes/openapi.routes.js';
import { problemsRoutes } from './routes/problems.routes.js';
import { productsRoutes } from './routes/products.routes.js';
import { sitemapRoutes } from './routes/sitemap.routes.js';
import { subscriptionsRoutes } from './routes/subscriptions.routes.js';
import { emailConfirmationRoutes } from './routes/email-confirmation.routes.js';
import { checkoutRoutes } from './routes/checkout.routes.js';
import { ordersRoutes } from './routes/orders.routes.js';
import { sellerOrdersRoutes } from './routes/seller-orders.routes.js';
import type { OrderClient } from '../clients/order.client.js';
import type { PendingQuotesOf } from '../application/order.operations.js';
import { OrderOperations, pendingQuotesVia } from '../application/order.operations.js';
import { QuoteRequests } from '../application/quote.requests.js';
import type { Principal } from '../domain/account.js';
import { QUOTE_LIMITS } from '@marketplace/vocabulary';
import type { QuoteClient } from '../clients/quote.client.js';
import { authenticate, principalOf } from './auth.middleware.js';
import {
  catalogReadLimit,
  clientAddressContext,
  clientAddressOfRequest,
  RateLimiter,
  rateLimit,
} from './rate-limit.js';
import { quotesRoutes } from './routes/quotes.routes.js';

/** Bodies are small JSON documents: a full listing with 10,000 escaped characters stays far below this. */
/** The caller's own quote request ids for completion/complete: a buyer's requests, or those a seller received. */
const ownQuoteRequestIds = async (quotes: QuoteRequests, principal: Principal): Promise<string[]> => {
  const { quote_requests: requests } =
    principal.role === 'seller'
      ? await quotes.list(principal, 'all', QUOTE_LIMITS.maxListLimit)
      : await quotes.listMine(principal, { status: 'all', limit: QUOTE_LIMITS.maxListLimit, offset: 0 });
  return requests.map((request) => String(request.quote_request_id));
};

export const DEFAULT_BODY_LIMIT_BYTES = 256 * 1024;

export interface GatewayDependencies {
  readonly identity: IdentityService;
  readonly listing: ListingClient;
  readonly catalog: CatalogClient;
  /** Absent: no saved searches (routes 404, no subscribe_to_query tool, no subscription resource). */
  readonly subscription?: SubscriptionClient | undefined;
  /** Absent: no checkout, orders or order tools. */
  readonly order?: OrderClient | undefined;
  /** The seller's pending quotes for the inbox digest; absent without a quote service. */
  readonly orderInboxQuotes?: PendingQuotesOf | undefined;
  /** Absent: no quote requests (route 404, no quote tools). */
  readonly quote?: QuoteClient | undefined;
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
  const catalogQueries = new CatalogQueries(deps.catalog, views);
  app.use(
    '/api/ucp/catalog',
    ...catalogReadLimit(authenticate(deps.identity, { required: false }), rateLimiter),
  );
  app.use(catalogRoutes(problems, catalogQueries, deps.identity));
  const quoteClient = deps.quote;
  const quotes = quoteClient === undefined ? undefined : new QuoteRequests(quoteClient, deps.identity);
  const listingCommands = new ListingCommands(deps.listing, views);
  app.use(productsRoutes(problems, listingCommands, deps.identity, bodyLimitBytes));
  app.use(agentTokensRoutes(problems, deps.identity, deps.logger));
  if (deps.adminToken !== undefined) {
    app.use(
      adminRoutes({
        problems,
        identity: deps.identity,
        adminToken: deps.adminToken,
        logger: deps.logger,
        bodyLimitBytes,
      }),
    );
  }
  const subscriptions =
    deps.subscription === undefined ? undefined : new SubscriptionCommands(deps.subscription, publicBaseUrl);
  if (subscriptions) {
    app.use(subscriptionsRoutes(problems, subscriptions, deps.identity, bodyLimitBytes, rateLimiter));
    app.use(emailConfirmationRoutes(problems, subscriptions));
  }
  if (deps.subscription !== undefined) {
    app.use(
      sellerWebhooksRoutes(problems, new SellerWebhooks(deps.subscription), deps.identity, bodyLimitBytes),
    );
  }
  const orders =
    deps.order === undefined
      ? undefined
      : new OrderOperations(
          deps.order,
          deps.orderInboxQuotes ??
            (quoteClient && pendingQuotesVia((request) => quoteClient.listQuoteRequests(request))),
        );
  const quotePurchases = quotes && orders && new QuotePurchases(quotes, orders);
  const confirmations =
    orders && new CheckoutConfirmations(orders, deps.identity, deps.confirmationKey ?? randomBytes(32));
  if (quotes) app.use(quotesRoutes(problems, quotes, deps.identity, rateLimiter, quotePurchases));
  if (orders) {
    app.use(checkoutRoutes(problems, orders, deps.identity, bodyLimitBytes));
    if (confirmations) {
      app.use(checkoutConfirmationRoutes(problems, confirmations, deps.identity, bodyLimitBytes));
    }
    app.use(ordersRoutes(problems, orders, deps.identity, bodyLimitBytes));
    app.use(sellerOrdersRoutes(problems, orders, deps.identity, bodyLimitBytes));
    if (deps.adminToken !== undefined) {
      app.use(adminDisputesRoutes(problems, orders, deps.adminToken, bodyLimitBytes));
    }
  }
  const tools = createToolRegistry({
    catalog: catalogQueries,
    subscriptions: subscriptions && { commands: subscriptions, limiter: rateLimiter },
    orders,
    listings: listingCommands,
    quotes: quotes && { requests: quotes, limiter: rateLimiter },
    quotePurchases,
    confirmations,
  });
  const mcpResources = marketplaceResources({
    catalog: catalogQueries,
    subscriptions,
    quoteRequestsSince: quoteClient && ((sinceMs) => quoteClient.countQuoteRequestsSince(sinceMs)),
  });
  const dispatcher = new McpDispatcher(tools, mcpResources, deps.logger, {
    quoteRequestIds: quotes && ((principal) => ownQuoteRequestIds(quotes, principal)),
  });
  app.use(discoveryRoutes(problems, dispatcher, publicBaseUrl));
  app.use(openApiRoutes(problems, publicBaseUrl));
  app.use(asyncApiRoutes(problems, publicBaseUrl));
  app.use(feedRoutes(problems, catalogQueries, publicBaseUrl));
  app.use(sitemapRoutes(problems, catalogQueries, publicBaseUrl));
  app.use(markdownRoutes(problems, catalogQueries, publicBaseUrl));
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
      rateLimit: rateLimit(rateLimiter, (req) =>
        rateLimiter.catalogChecks(principalOf(req), clientAddressOfRequest(req)),
      ),
    }),
  );
  app.use(notFoundFallback(problems));
  app.use(problemErrorHandler(problems, deps.logger));
  return app;
};
