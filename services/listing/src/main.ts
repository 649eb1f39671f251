import { z } from 'zod';
import { DEFAULT_GRPC_PORTS, envPort } from '@marketplace/platform';
import { runServiceMain } from '@marketplace/runtime';
import { startListingService } from './listing.service.js';

/** Cluster mode: one listing service per process, infrastructure from the environment (see README). */
runServiceMain({
  name: 'listing',
  configSchema: z.object({
    GRPC_HOST: z.string().default('0.0.0.0'),
    GRPC_PORT: envPort(DEFAULT_GRPC_PORTS.listing),
  }),
  start: ({ db, log, logger, clock }, config) =>
    startListingService({ db, log, logger, clock, grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT } }),
});
