export { startTelemetry, telemetryEnabled, type Telemetry } from './sdk.js';
export { httpServerTelemetry } from './http.js';
export {
  grpcClientTelemetry,
  grpcServerTelemetry,
  startGrpcClientCall,
  startGrpcServerCall,
  type GrpcCallTelemetry,
} from './grpc.js';
export { tracedEventLog } from './eventlog.js';
