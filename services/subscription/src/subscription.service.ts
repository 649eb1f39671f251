import type { Database } from '@marketplace/database';
import type { EventLog } from '@marketplace/eventlog';
import type { Clock, Logger, ServiceHandle } from '@marketplace/platform';
import { serveGrpcService } from '@marketplace/rpc';

export interface SubscriptionServiceOptions {
  readonly db: Database;
  readonly log: EventLog;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly grpc: { readonly host: string; readonly port: number };
}

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
