import { z } from 'zod';
import { blobStoreConfigSchema, createBlobStore } from '@marketplace/blobstore';
import { createMailer, mailerConfigSchema } from '@marketplace/mailer';
import { outboundConfigSchema } from '@marketplace/outbound-http';
import { DEFAULT_GRPC_PORTS, envPort } from '@marketplace/platform';
import { infrastructureConfigSchema, runServiceMain } from '@marketplace/runtime';
import { imageFetchConfigSchema, imageFetchOptionsOf } from './image-fetch.config.js';
import { startListingService } from './listing.service.js';

/** Cluster mode: one listing service per process, infrastructure from the environment (see README). */
runServiceMain({
  name: 'listing',
  configSchema: z.object({
    GRPC_HOST: z.string().default('0.0.0.0'),
    GRPC_PORT: envPort(DEFAULT_GRPC_PORTS.listing),
    DATA_DIR: infrastructureConfigSchema.shape.DATA_DIR,
    ...blobStoreConfigSchema.shape,
    ...outboundConfigSchema.shape,
    ...imageFetchConfigSchema.shape,
    ...mailerConfigSchema.shape,
    /** `{base_url}` of the listing links in staleness emails (the gateway's public URL). */
    PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  }),
  start: ({ db, log, logger, clock, relayBatchIntervalMs }, config) =>
    startListingService({
      db,
      log,
      logger,
      clock,
      relayBatchIntervalMs,
      grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT },
      blobs: createBlobStore(config, config.DATA_DIR),
      outboundAllowList: config.OUTBOUND_ALLOW_HOSTS,
      imageFetch: imageFetchOptionsOf(config),
      mailer: createMailer(config, config.DATA_DIR),
      publicBaseUrl: config.PUBLIC_BASE_URL,
    }),
});
