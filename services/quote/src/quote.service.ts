import type { ServiceHandle } from '@marketplace/platform';
import type { ServiceDependencies } from '@marketplace/runtime';
import { serveGrpcService } from '@marketplace/rpc';

export type QuoteServiceOptions = ServiceDependencies;

/**
 * The quote service as it stands before its domain lands: a running gRPC server with the health service, started
 * and drained like every other service, so the runner, the chart and the probes already treat it as real.
 */
export const startQuoteService = (options: QuoteServiceOptions): Promise<ServiceHandle> =>
  serveGrpcService({
    host: options.grpc.host,
    port: options.grpc.port,
    services: [],
    logger: options.logger.child({ service: 'quote' }),
    serviceName: 'quote',
  });
