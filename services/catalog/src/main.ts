import { z } from 'zod';
import { DEFAULT_GRPC_PORTS, envPort } from '@marketplace/platform';
import { runServiceMain } from '@marketplace/runtime';
import { startCatalogService } from './catalog.service.js';

/** Cluster mode: one catalog service per process, infrastructure from the environment (see README). */
runServiceMain({
  name: 'catalog',
  configSchema: z.object({
    GRPC_HOST: z.string().default('0.0.0.0'),
    GRPC_PORT: envPort(DEFAULT_GRPC_PORTS.catalog),
  }),
  start: (infrastructure, config) =>
    startCatalogService({ ...infrastructure, grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT } }),
});
