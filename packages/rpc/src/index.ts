export {
  startGrpcServer,
  LIVENESS_HEALTH_SERVICE,
  type GrpcServer,
  type GrpcServerOptions,
  type GrpcService,
  type ServingStatus,
} from './grpc-server.js';
export {
  createGrpcClient,
  DEFAULT_DEADLINE_MS,
  type GrpcClient,
  type GrpcClientOptions,
} from './grpc-client.js';
export { IN_PROCESS_HOST } from './in-process.js';
export { signalAbortedOnTerminate } from './server.interceptor.js';
export {
  createServingProbe,
  waitForServing,
  type ServingProbe,
  type WaitForServingOptions,
} from './wait-for-serving.js';
export {
  serveGrpcService,
  GRPC_DRAIN_TIMEOUT_MS,
  READINESS_REFRESH_MS,
  type GrpcServiceHandleOptions,
} from './grpc-service-handle.js';
export {
  configureInternalAuth,
  signInternalToken,
  INTERNAL_AUTH_METADATA,
  INTERNAL_TOKEN_TTL_S,
  MIN_INTERNAL_KEY_BYTES,
  type CallActor,
  type InternalCredentials,
  type InternalTokenClaims,
} from './internal-auth.js';
export { actingAccountId, ACCOUNT_ACTOR_KINDS } from './acting-account.js';
