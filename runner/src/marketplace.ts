import { createBlobStore } from '@marketplace/blobstore';
import { createMailer } from '@marketplace/mailer';
import { persistentSigningKey, signingKeyFromPem } from '@marketplace/platform';
import type { ServiceHandle } from '@marketplace/platform';
import type { Infrastructure } from '@marketplace/runtime';
import { imageFetchOptionsOf, startListingService } from '@marketplace/listing';
import { createEmbedder, startCatalogService } from '@marketplace/catalog';
import { startQuoteService } from '@marketplace/quote';
import { startOrderService } from '@marketplace/order';
import { loadOrCreateSigningSecret, startSubscriptionService } from '@marketplace/subscription';
import { persistentSecret, startGateway } from '@marketplace/gateway';
import { IN_PROCESS_HOST } from '@marketplace/rpc';
import type { EmbeddedConfig } from './embedded.config.js';

/**
 * Each service keeps its own gRPC server, served in this process: clients call it without a socket, through the
 * same interceptors, encoding and error mapping as production's (docs/architecture.md, "In-process calls").
 */
const IN_PROCESS = { host: IN_PROCESS_HOST, port: 0 } as const;

/**
 * Starts every service on one shared infrastructure (each binds its own name to the logger), the gateway last. Returns the handles in start order,
 * so they drain in reverse.
 */
export const startMarketplace = async (
  infrastructure: Infrastructure,
  config: EmbeddedConfig,
): Promise<ServiceHandle[]> => {
  const handles: ServiceHandle[] = [];
  // One store for both: the listing service writes the images the gateway serves.
  const images = createBlobStore(config, config.DATA_DIR);
  // One signing key for the profile the gateway publishes and the webhooks the subscription service signs.
  const signingKey =
    config.SIGNING_KEY_PEM === undefined
      ? await persistentSigningKey(config.DATA_DIR, 'signing-key.pem')
      : signingKeyFromPem(config.SIGNING_KEY_PEM);
  try {
    const listing = await startListingService({
      ...infrastructure,
      grpc: IN_PROCESS,
      blobs: images,
      outboundAllowList: config.OUTBOUND_ALLOW_HOSTS,
      imageFetch: imageFetchOptionsOf(config),
      mailer: createMailer(config, config.DATA_DIR),
      publicBaseUrl: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`,
    });
    handles.push(listing);
    const catalog = await startCatalogService({
      ...infrastructure,
      grpc: IN_PROCESS,
      embedder: await createEmbedder(config, config.DATA_DIR),
    });
    handles.push(catalog);
    const quote = await startQuoteService({
      ...infrastructure,
      grpc: IN_PROCESS,
      mailer: createMailer(config, config.DATA_DIR),
      publicBaseUrl: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`,
    });
    handles.push(quote);
    const order = await startOrderService({
      ...infrastructure,
      grpc: IN_PROCESS,
      // Checkout reads listings and reserves their stock, and prices quoted lines at the agreed price.
      services: { listing: listing.address, quote: quote.address },
      settings: config,
      mailer: createMailer(config, config.DATA_DIR),
    });
    handles.push(order);
    const subscription = await startSubscriptionService({
      ...infrastructure,
      grpc: IN_PROCESS,
      mailer: createMailer(config, config.DATA_DIR),
      signingSecret: await loadOrCreateSigningSecret(config.WEBHOOK_SIGNING_SECRET, config.DATA_DIR),
      signingKey,
      outboundAllowList: config.OUTBOUND_ALLOW_HOSTS,
      publicBaseUrl: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`,
    });
    handles.push(subscription);
    const backends = [...handles];
    handles.push(
      await startGateway({
        ...infrastructure,
        images,
        http: { host: config.HOST, port: config.PORT },
        services: {
          listing: listing.address,
          catalog: catalog.address,
          subscription: subscription.address,
          order: order.address,
          quote: quote.address,
        },
        // One gateway: counters in process unless RATE_LIMIT_STORE says otherwise.
        rateLimits: config,
        adminToken: config.ADMIN_TOKEN,
        agentTokenSecret:
          config.AGENT_TOKEN_SECRET ?? (await persistentSecret(config.DATA_DIR, 'agent-token-secret')),
        signingKey,
        publicBaseUrl: config.PUBLIC_BASE_URL,
        importRestShare: config.IMPORT_REST_SHARE,
        isBackendReady: () => backends.every((handle) => handle.isReady()),
      }),
    );
    return handles;
  } catch (error) {
    await Promise.allSettled([...handles].reverse().map((handle) => handle.stop()));
    throw error;
  }
};
