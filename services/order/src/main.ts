import { DEFAULT_GRPC_PORTS } from '@marketplace/platform';
import { grpcListenConfigSchema, runServiceMain } from '@marketplace/runtime';
import { startOrderService } from './order.service.js';

/** Cluster mode: one order service per process, infrastructure from the environment (see the root README). */
runServiceMain({
  name: 'order',
  configSchema: grpcListenConfigSchema(DEFAULT_GRPC_PORTS.order),
  start: (infrastructure, config) =>
    startOrderService({ ...infrastructure, grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT } }),
});
