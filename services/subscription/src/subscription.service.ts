import type { ServiceHandle } from '@marketplace/platform';
import type { ServiceDependencies } from '@marketplace/runtime';
import { serveGrpcService } from '@marketplace/rpc';

export type SubscriptionServiceOptions = ServiceDependencies;

/**
 * The subscription service as it stands before its domain lands: a running gRPC server with the health service, started
 * and drained like every other service, so the runner, the chart and the probes already treat it as real.
 */
export const startSubscriptionService = (options: SubscriptionServiceOptions): Promise<ServiceHandle> =>
  serveGrpcService({
    host: options.grpc.host,
    port: options.grpc.port,
    services: [],
    logger: options.logger.child({ service: 'subscription' }),
    serviceName: 'subscription',
  });
