import { DEFAULT_GRPC_PORTS } from '@marketplace/platform';
import { grpcListenConfigSchema, runServiceMain } from '@marketplace/runtime';
import { startQuoteService } from './quote.service.js';

/** Cluster mode: one quote service per process, infrastructure from the environment (see the root README). */
runServiceMain({
  name: 'quote',
  configSchema: grpcListenConfigSchema(DEFAULT_GRPC_PORTS.quote),
  start: (infrastructure, config) =>
    startQuoteService({ ...infrastructure, grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT } }),
});
