import { DEFAULT_GRPC_PORTS } from '@marketplace/platform';
import { grpcListenConfigSchema, runServiceMain } from '@marketplace/runtime';
import { startSubscriptionService } from './subscription.service.js';

/** Cluster mode: one subscription service per process, infrastructure from the environment (see the root README). */
runServiceMain({
  name: 'subscription',
  configSchema: grpcListenConfigSchema(DEFAULT_GRPC_PORTS.subscription),
  start: (infrastructure, config) =>
    startSubscriptionService({ ...infrastructure, grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT } }),
});
