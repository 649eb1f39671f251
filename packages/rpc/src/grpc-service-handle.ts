import type { ServiceHandle } from '@marketplace/platform';
import type { TsProtoServiceDefinition } from 'nice-grpc';
import type { GrpcServerOptions, ServingStatus } from './grpc-server.js';
import { startGrpcServer } from './grpc-server.js';

/** How long a stop lets in-flight gRPC calls finish before cancelling them. */
export const GRPC_DRAIN_TIMEOUT_MS = 10_000;
/** How often the health status follows `isCaughtUp` (what Kubernetes' readiness probe reads). */
export const READINESS_REFRESH_MS = 1_000;

export interface GrpcServiceHandleOptions<
  Definitions extends readonly TsProtoServiceDefinition[],
> extends GrpcServerOptions<Definitions> {
  /** Runs after the server stopped taking calls: stop relays and consumers the calls may have fed. */
  readonly afterServerStopped?: () => Promise<void>;
  /** Readiness beyond "not stopping", e.g. a projection that has caught up; the health status follows it. */
  readonly isCaughtUp?: () => boolean;
  /** How often the health status is brought in line with `isCaughtUp`; default 1 s. */
  readonly readinessRefreshMs?: number;
}

/**
 * Serves a service's gRPC API and wraps it as the ServiceHandle every service returns: ready while not stopping
 * (and caught up), and a stop that drains the server first, then what runs behind it, once.
 */
export const serveGrpcService = async <const Definitions extends readonly TsProtoServiceDefinition[]>(
  options: GrpcServiceHandleOptions<Definitions>,
): Promise<ServiceHandle> => {
  const { isCaughtUp } = options;
  const statusNow = (): ServingStatus =>
    isCaughtUp === undefined || isCaughtUp() ? 'SERVING' : 'NOT_SERVING';
  const server = await startGrpcServer({ ...options, initialStatus: options.initialStatus ?? statusNow() });
  let stopping: Promise<void> | undefined;
  // The health service (the readiness probe, the gateway's backend checks) says NOT_SERVING while behind.
  let reported = statusNow();
  const followReadiness = isCaughtUp
    ? setInterval(() => {
        const status = statusNow();
        if (stopping !== undefined || status === reported) return;
        reported = status;
        server.setServing(status);
      }, options.readinessRefreshMs ?? READINESS_REFRESH_MS)
    : undefined;
  followReadiness?.unref();
  const drain = async (): Promise<void> => {
    clearInterval(followReadiness);
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
