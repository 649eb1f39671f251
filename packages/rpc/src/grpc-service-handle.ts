import type { ServiceHandle } from '@marketplace/platform';
import type { TsProtoServiceDefinition } from 'nice-grpc';
import type { GrpcServerOptions } from './grpc-server.js';
import { startGrpcServer } from './grpc-server.js';

/** How long a stop lets in-flight gRPC calls finish before cancelling them. */
export const GRPC_DRAIN_TIMEOUT_MS = 10_000;

export interface GrpcServiceHandleOptions<
  Definitions extends readonly TsProtoServiceDefinition[],
> extends GrpcServerOptions<Definitions> {
  /** Runs after the server stopped taking calls: stop relays and consumers the calls may have fed. */
  readonly afterServerStopped?: () => Promise<void>;
  /** Readiness beyond "not stopping", e.g. a projection that has caught up. */
  readonly isCaughtUp?: () => boolean;
}

/**
 * Serves a service's gRPC API and wraps it as the ServiceHandle every service returns: ready while not stopping
 * (and caught up), and a stop that drains the server first, then what runs behind it, once.
 */
export const serveGrpcService = async <const Definitions extends readonly TsProtoServiceDefinition[]>(
  options: GrpcServiceHandleOptions<Definitions>,
): Promise<ServiceHandle> => {
  const server = await startGrpcServer(options);
  let stopping: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    await server.shutdown(GRPC_DRAIN_TIMEOUT_MS);
    await options.afterServerStopped?.();
  };
  return {
    name: options.serviceName,
    address: server.address,
    isReady: () => stopping === undefined && (options.isCaughtUp?.() ?? true),
    stop: () => (stopping ??= drain()),
  };
};
