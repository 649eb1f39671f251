import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { SigningKey } from '@marketplace/platform';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { BlobStore } from '@marketplace/blobstore';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import type { EventLog } from '@marketplace/eventlog';
import { IDEMPOTENCY_KEY_PURGE_INTERVAL_MS, startOutboxRelay } from '@marketplace/eventsourcing';
import { schedulePeriodicJob } from '@marketplace/runtime';
import type { Clock, Logger, ServiceHandle } from '@marketplace/platform';
import { createServingProbe } from '@marketplace/rpc';
import { encodeAccountEvent } from '../contexts/identity/adapters/account-event.codec.js';
import { IDENTITY_MIGRATIONS } from '../contexts/identity/adapters/identity.migrations.js';
import { IdentityRepository } from '../contexts/identity/adapters/identity.repository.js';
import { createIdentityService } from '../contexts/identity/identity.service.js';
import { createCatalogClient } from '../contexts/catalog/catalog.client.js';
import { createListingClient } from '../contexts/listings/listing.client.js';
import { LISTING_IMPORT_MIGRATIONS } from '../contexts/listings/adapters/listing-imports.migrations.js';
import { ListingImportsTable } from '../contexts/listings/adapters/listing-imports.table.js';
import { applyChunkVia } from '../contexts/listings/imports/apply-chunk.js';
import { startImportWorker } from '../contexts/listings/imports/import.worker.js';
import { paceImport } from '../contexts/listings/imports/pace-import.js';
import { importPacingOf } from './import-pacing.config.js';
import { createSubscriptionClient } from '../contexts/subscriptions/subscription.client.js';
import { startSavedSearchMatchFeed } from '../contexts/subscriptions/saved-search-matches.js';
import { createOrderClient } from '../contexts/orders/order.client.js';
import { createQuoteClient } from '../contexts/quotes/quote.client.js';
import type { RateLimitConfig } from './http/rate-limit.config.js';
import { Problems } from './http/problem.js';
import { openRateLimiter } from './http/rate-limit.js';
import { answerUnparsableRequests } from './http/unparsable-requests.js';
import { recordRequestTimings } from './http/request-timings.js';
import { createGatewayApp } from './app.js';
import { createHttpDrain } from './http/drain.js';
import type { McpSessionLimits } from './mcp/mcp-sessions.js';
import { DEFAULT_MCP_SESSION_LIMITS, McpSessions } from './mcp/mcp-sessions.js';
import type { ReadinessCheck } from './readiness.js';
import { Readiness } from './readiness.js';

export interface GatewayOptions {
  readonly db: Database;
  /** The listing images the listing service re-hosted, served at /images/. */
  readonly images: BlobStore;
  /** Where the account events of the identity schema's outbox are published. */
  readonly log: EventLog;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The least time between two rounds of a busy outbox relay (Infrastructure's); default the relay's. */
  readonly relayBatchIntervalMs?: number | undefined;
  readonly http: { readonly host: string; readonly port: number };
  /** gRPC addresses (`host:port`) of the services the gateway calls. */
  readonly services: {
    readonly listing: string;
    readonly catalog: string;
    readonly subscription: string;
    readonly order: string;
    readonly quote: string;
  };
  /**
   * The rate limits (`RATE_LIMIT_*`) and the store they count in (`RATE_LIMIT_STORE`, default `memory`). Absent:
   * no limits (tests); main.ts and the embedded runner always pass them.
   */
  readonly rateLimits?: RateLimitConfig | undefined;
  /** Unset: the admin API answers 404. */
  readonly adminToken?: string | undefined;
  /**
   * Signs agent tokens (AGENT_TOKEN_SECRET; every replica needs the same). Unset: a random one per start, so
   * tokens die with the process; main.ts and the embedded runner always pass one.
   */
  readonly agentTokenSecret?: string | undefined;
  /**
   * The ES256 key that signs the marketplace's own messages and is published in /.well-known/ucp
   * (docs/agents.md, "Signing key"). Unset: a random one per start; main.ts and the embedded runner pass one.
   */
  readonly signingKey?: SigningKey | undefined;
  /** Default: `http://localhost:<port>`. */
  readonly publicBaseUrl?: string | undefined;
  /** Replaces the gRPC health checks of the backends (the embedded runner knows their state directly). */
  readonly isBackendReady?: () => boolean;
  /** Schema of accounts and API keys; default `identity`. Tests pass a fresh one. */
  readonly identitySchema?: string;
  /** Schema of the listing imports (docs/imports.md); default `listing_imports`. Tests pass a fresh one. */
  readonly importsSchema?: string;
  /** How often an idle import worker looks for queued imports; default 2 s (an upload wakes it at once). */
  readonly importPollMs?: number;
  /** While others are served, an import rests this many times each chunk's window (docs/imports.md, "Pacing"). */
  readonly importRestShare?: number;
  /** Deadline of every gRPC call; default 5 s. */
  readonly grpcDeadlineMs?: number;
  /** How long stop() lets in-flight requests finish before cutting connections; default 10 s. */
  readonly drainTimeoutMs?: number;
  /** Bounds of the MCP sessions (docs/agents.md, "MCP resource subscriptions"); default DEFAULT_MCP_SESSION_LIMITS. */
  readonly mcpSessionLimits?: Partial<McpSessionLimits>;
}

export const IDENTITY_SCHEMA = 'identity';
export const IMPORTS_SCHEMA = 'listing_imports';
/**
 * How long a gateway may keep an active API key without reading it again: the bound on a revocation whose
 * notification was lost (docs/security.md, "API key revocation"); a notified revocation takes milliseconds.
 */
export const API_KEY_CACHE_TTL_MS = 30_000;
/** A readiness check that takes longer than this counts as failed. */
const READINESS_CHECK_TIMEOUT_MS = 1_000;
/** How often isReady() is refreshed when nobody polls /readyz. */
const READINESS_REFRESH_MS = 2_000;
/** Slow clients may not hold a connection forever with a trickling body. */
const REQUEST_TIMEOUT_MS = 30_000;
/** A client trickling its headers (slowloris) is cut off after this; checked every CONNECTIONS_CHECK_MS. */
const HEADERS_TIMEOUT_MS = 10_000;
const CONNECTIONS_CHECK_MS = 1_000;
/**
 * An idle connection is kept this long, and clients are told so (`Keep-Alive: timeout=65`). Longer than the 60 s
 * idle timeout of common load balancers and than what HTTP clients keep (they close first, allowing for the
 * hint's rounding), so nobody sends a request on a connection the gateway is closing. Node's 5 s default left a
 * 2 s margin, which a busy client's event loop can exceed: its request then met "other side closed".
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;
/** The latest requests whose latencies the import's pacing reads: tens of seconds at a few dozen a second. */
const FOREGROUND_TIMINGS = 1_024;

/**
 * Starts the gateway: migrates the identity schema, opens one gRPC client per backend, and serves HTTP.
 * Resolves once listening; `stop()` drains in-flight requests (bounded), then closes the clients.
 */
export const startGateway = async (options: GatewayOptions): Promise<ServiceHandle> => {
  const { db, clock } = options;
  const logger = options.logger.child({ service: 'gateway' });
  const schema = options.identitySchema ?? IDENTITY_SCHEMA;
  await migrate(db, schema, IDENTITY_MIGRATIONS);
  const agentTokenSecret = options.agentTokenSecret ?? randomBytes(32).toString('base64url');
  // MCP sessions and their resource subscriptions live in this replica; a follower of the log hands it every
  // saved-search match (docs/agents.md, "MCP resource subscriptions"). A revoked key ends its sessions.
  const mcpSessions = new McpSessions({ ...DEFAULT_MCP_SESSION_LIMITS, ...options.mcpSessionLimits }, () =>
    clock.now(),
  );
  const identity = createIdentityService({
    db,
    schema,
    repository: new IdentityRepository(schema),
    clock,
    agentTokenSecret,
    keyCache: { ttlMs: API_KEY_CACHE_TTL_MS },
    onKeyRevoked: (prefix) => mcpSessions.endKey(prefix),
  });
  await identity.start();
  const clientOptions = { deadlineMs: options.grpcDeadlineMs };
  const listing = createListingClient(options.services.listing, clientOptions);
  const catalog = createCatalogClient(options.services.catalog, clientOptions);
  const subscription = createSubscriptionClient(options.services.subscription, clientOptions);
  const order = createOrderClient(options.services.order, clientOptions);
  const quote = createQuoteClient(options.services.quote, clientOptions);
  const importsSchema = options.importsSchema ?? IMPORTS_SCHEMA;
  await migrate(db, importsSchema, LISTING_IMPORT_MIGRATIONS);
  const importStore = new ListingImportsTable(db, importsSchema);
  // The import paces itself by every other request's latency (docs/imports.md, "Pacing").
  const foreground = recordRequestTimings({
    capacity: FOREGROUND_TIMINGS,
    ignore: (path) => path.startsWith('/api/products/imports'),
  });
  const importWorker = startImportWorker({
    store: importStore,
    apply: applyChunkVia(listing),
    logger,
    pollMs: options.importPollMs,
    // The import only paces on the answer: a catalog that cannot answer makes it wait (bounded), never fail.
    pace: paceImport(
      async ({ sellerAccountId, productId, version }, timeoutMs) =>
        catalog.awaitProductVersion({ productId, minVersion: version, sellerAccountId, timeoutMs }),
      foreground,
      importPacingOf(options.importRestShare),
    ),
  });
  // Uploads' idempotency keys are forgotten after 24 hours, as the services' are (docs/idempotency.md).
  const importKeyPurge = schedulePeriodicJob('import-key-purge', () => importStore.purgeExpiredKeys(), {
    intervalMs: IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
    logger,
  });
  const rateLimits =
    options.rateLimits === undefined
      ? undefined
      : await openRateLimiter(options.rateLimits, { db, now: () => clock.now(), defaultStore: 'memory' });
  const relay = startOutboxRelay({
    db,
    schema,
    log: options.log,
    name: 'gateway',
    encode: encodeAccountEvent,
    batchIntervalMs: options.relayBatchIntervalMs,
    logger,
  });
  const sweepSessions = setInterval(
    () => mcpSessions.sweep(),
    Math.min(60_000, Math.max(1_000, mcpSessions.limits.idleMs / 2)),
  );
  sweepSessions.unref();
  const matchFeed = await startSavedSearchMatchFeed({
    log: options.log,
    onUpdated: (uris) => mcpSessions.notifyUpdated(uris),
    logger,
  });

  // One kept health client per backend: a check every READINESS_REFRESH_MS (and per /readyz) goes over its open
  // connection instead of opening a channel of its own each time.
  const { isBackendReady } = options;
  const backends = ['listing', 'catalog', 'subscription', 'order', 'quote'] as const;
  const probes = isBackendReady
    ? []
    : backends.map((name) => ({ name, probe: createServingProbe(options.services[name]) }));
  const backendChecks: Record<string, ReadinessCheck> = isBackendReady
    ? { backends: async () => isBackendReady() }
    : Object.fromEntries(
        probes.map(({ name, probe }): [string, ReadinessCheck] => [
          name,
          () => probe.waitForServing({ timeoutMs: READINESS_CHECK_TIMEOUT_MS }).then(() => true),
        ]),
      );
  const closeProbes = (): void => {
    for (const { probe } of probes) probe.close();
  };
  const readiness = new Readiness(
    { ...backendChecks, identity: () => identity.probe().then(() => true) },
    READINESS_CHECK_TIMEOUT_MS,
  );

  const server = createServer({
    requestTimeout: REQUEST_TIMEOUT_MS,
    headersTimeout: HEADERS_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
  });
  try {
    server.listen(options.http.port, options.http.host);
    await once(server, 'listening');
  } catch (error) {
    clearInterval(sweepSessions);
    closeProbes();
    await matchFeed.close();
    listing.close();
    catalog.close();
    subscription.close();
    order.close();
    quote.close();
    await importWorker.stop();
    await importKeyPurge.stop();
    await rateLimits?.close();
    await relay.stop();
    await identity.stop();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const publicBaseUrl = options.publicBaseUrl ?? `http://localhost:${port}`;
  const http = createHttpDrain(
    server,
    createGatewayApp({
      identity,
      listing,
      catalog,
      subscription,
      order,
      quote,
      rateLimiter: rateLimits?.limiter,
      trustProxyHops: options.rateLimits?.TRUST_PROXY_HOPS,
      images: options.images,
      logger,
      publicBaseUrl,
      adminToken: options.adminToken,
      readiness: () => readiness.check(),
      // Derived from the agent token secret, under a label of its own: no new secret to distribute.
      signingKey: options.signingKey,
      confirmationKey: createHmac('sha256', agentTokenSecret).update('checkout-confirmation').digest(),
      listingImports: { store: importStore, wake: () => importWorker.wake() },
      mcpSessions,
    }),
    publicBaseUrl,
  );
  server.on('request', foreground.listener);
  server.on('request', http.listener);
  answerUnparsableRequests(server, new Problems(publicBaseUrl));
  const { host } = options.http;
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  logger.info({ address, publicBaseUrl, adminApi: options.adminToken !== undefined }, 'gateway listening');

  const refresh = setInterval(() => void readiness.check(), READINESS_REFRESH_MS);
  refresh.unref();
  void readiness.check();

  let stopped: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    clearInterval(refresh);
    closeProbes();
    // Session streams never end by themselves: closed first, so draining waits only for ordinary requests.
    clearInterval(sweepSessions);
    mcpSessions.closeAll();
    const cutOff = setTimeout(
      () => server.closeAllConnections(),
      options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    );
    await http.drain();
    clearTimeout(cutOff);
    mcpSessions.closeAll();
    await matchFeed.close();
    // Before the listing client closes: a chunk in flight finishes, or is sent again with its key next start.
    await importWorker.stop();
    await importKeyPurge.stop();
    listing.close();
    catalog.close();
    subscription.close();
    order.close();
    quote.close();
    await rateLimits?.close();
    // After the server, so the relay is still running while the last requests append.
    await relay.stop();
    await identity.stop();
    logger.info({ address }, 'gateway stopped');
  };

  return {
    name: 'gateway',
    address,
    isReady: () => readiness.lastReport.ready,
    stop: () => (stopped ??= drain()),
  };
};
