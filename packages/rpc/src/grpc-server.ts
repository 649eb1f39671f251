import type { Logger } from '@marketplace/platform';
import { createServer, type ServiceImplementation, type TsProtoServiceDefinition } from 'nice-grpc';
import { HealthDefinition, HealthServiceImpl, HealthState } from 'nice-grpc-server-health';
import { createInProcessServer, IN_PROCESS_HOST, type ServerTransport } from './in-process.js';
import { REPLICA_SERVER_OPTIONS } from './replica-balancing.js';
import { createServerInterceptor } from './server.interceptor.js';

/** The two states a server reports through grpc.health.v1, overall and for each of its services. */
export type ServingStatus = 'SERVING' | 'NOT_SERVING';

export interface GrpcService<Definition extends TsProtoServiceDefinition> {
  /** A generated `...ServiceDefinition`, e.g. `listingV1.ListingServiceDefinition`. */
  readonly definition: Definition;
  readonly implementation: ServiceImplementation<Definition>;
}

export interface GrpcServerOptions<Definitions extends readonly TsProtoServiceDefinition[]> {
  /**
   * Interface to bind: `0.0.0.0` in a pod, `127.0.0.1` in tests; IN_PROCESS_HOST (the embedded runner) serves
   * callers in this process only, without a socket (in-process.ts).
   */
  readonly host: string;
  /** 0 binds a free ephemeral port; the chosen one is returned. */
  readonly port: number;
  readonly services: { readonly [K in keyof Definitions]: GrpcService<Definitions[K]> };
  readonly logger: Logger;
  /** The owning service (`listing`, `catalog`...), for log lines. */
  readonly serviceName: string;
  /** What health reports once listening; NOT_SERVING until a service has caught up, for example. */
  readonly initialStatus?: ServingStatus;
}

export interface GrpcServer {
  /** `host:port` as clients dial it. */
  readonly address: string;
  readonly port: number;
  /** Sets the health status overall and for every registered service. */
  setServing(status: ServingStatus): void;
  /**
   * Reports NOT_SERVING, ends health Watch streams, stops accepting calls and waits for in-flight ones; after
   * `timeoutMs` cancels whatever is still running. Calling it again returns the same promise.
   */
  shutdown(timeoutMs: number): Promise<void>;
}

const HEALTH_OF: Record<ServingStatus, 'healthy' | 'unhealthy'> = {
  SERVING: 'healthy',
  NOT_SERVING: 'unhealthy',
};

/** Overall status in grpc.health.v1 is the empty service name. */
const OVERALL = '';

/**
 * A health entry that is SERVING from listen until shutdown, whatever the readiness: Kubernetes' liveness probe
 * asks for it, so a service that is alive but not ready (catching up, draining) is not restarted.
 */
export const LIVENESS_HEALTH_SERVICE = 'liveness';

const dialAddress = (host: string, port: number): string =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/**
 * Starts a gRPC server with the health service, service-token checks on every other call, AppError-to-status
 * mapping (google.rpc details carry the kind and field violations), refusal of text PostgreSQL cannot store,
 * and bounded graceful shutdown.
 */
export const startGrpcServer = async <const Definitions extends readonly TsProtoServiceDefinition[]>(
  options: GrpcServerOptions<Definitions>,
): Promise<GrpcServer> => {
  const { host, serviceName, initialStatus = 'SERVING' } = options;
  const logger = options.logger.child({ component: 'grpc-server' });
  const { serverInterceptor, terminate } = createServerInterceptor(logger);
  const server: ServerTransport =
    host === IN_PROCESS_HOST
      ? createInProcessServer(serverInterceptor)
      : createServer(REPLICA_SERVER_OPTIONS).use(serverInterceptor);

  const healthState = HealthState();
  server.add(HealthDefinition, HealthServiceImpl(healthState));
  const services: readonly GrpcService<TsProtoServiceDefinition>[] = options.services;
  const serviceNames = services.map(({ definition }) => definition.fullName);
  for (const { definition, implementation } of services) server.add(definition, implementation);

  const setServing = (status: ServingStatus): void => {
    for (const name of [OVERALL, ...serviceNames]) healthState.setStatus(HEALTH_OF[status], name);
  };
  setServing(initialStatus);
  healthState.setStatus('healthy', LIVENESS_HEALTH_SERVICE);

  const port = await server.listen(dialAddress(host, options.port));
  const address = dialAddress(host, port);
  logger.info({ address, services: serviceNames }, `${serviceName} gRPC server listening`);

  const drain = async (timeoutMs: number): Promise<void> => {
    setServing('NOT_SERVING');
    terminate();
    let timer: NodeJS.Timeout | undefined;
    const deadlinePassed = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([server.shutdown().then(() => 'drained' as const), deadlinePassed]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      logger.warn(
        { address, timeoutMs },
        `${serviceName} gRPC calls still running after the bound; cancelling them`,
      );
      server.forceShutdown();
    }
    logger.info({ address, outcome }, `${serviceName} gRPC server stopped`);
  };
  let stopped: Promise<void> | undefined;

  return {
    address,
    port,
    setServing,
    shutdown: (timeoutMs) => (stopped ??= drain(timeoutMs)),
  };
};
