import { blobStoreConfigSchema, createBlobStore } from '@marketplace/blobstore';
import { infrastructureConfigSchema, runServiceMain } from '@marketplace/runtime';
import { gatewayConfigSchema } from './edge/gateway.config.js';
import { startGateway } from './edge/gateway.service.js';
import { persistentSecret } from './edge/persistent-secret.js';
import { persistentSigningKey, signingKeyFromPem } from '@marketplace/platform';

runServiceMain({
  name: 'gateway',
  configSchema: gatewayConfigSchema.extend({
    DATA_DIR: infrastructureConfigSchema.shape.DATA_DIR,
    ...blobStoreConfigSchema.shape,
  }),
  start: async ({ db, log, logger, clock, relayBatchIntervalMs }, config) =>
    startGateway({
      db,
      log,
      images: createBlobStore(config, config.DATA_DIR),
      logger,
      clock,
      relayBatchIntervalMs,
      http: { host: config.HOST, port: config.PORT },
      services: {
        listing: config.LISTING_GRPC_ADDR,
        catalog: config.CATALOG_GRPC_ADDR,
        subscription: config.SUBSCRIPTION_GRPC_ADDR,
        order: config.ORDER_GRPC_ADDR,
        quote: config.QUOTE_GRPC_ADDR,
      },
      // Replicas share the counters, so limits hold across them (docs/specification.md, "Quotes").
      rateLimits: { ...config, RATE_LIMIT_STORE: config.RATE_LIMIT_STORE ?? 'postgres' },
      adminToken: config.ADMIN_TOKEN,
      agentTokenSecret:
        config.AGENT_TOKEN_SECRET ?? (await persistentSecret(config.DATA_DIR, 'agent-token-secret')),
      signingKey:
        config.SIGNING_KEY_PEM === undefined
          ? await persistentSigningKey(config.DATA_DIR, 'signing-key.pem')
          : signingKeyFromPem(config.SIGNING_KEY_PEM),
      publicBaseUrl: config.PUBLIC_BASE_URL,
      grpcDeadlineMs: config.GRPC_DEADLINE_MS,
      importRestShare: config.IMPORT_REST_SHARE,
    }),
});
