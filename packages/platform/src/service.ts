/** What every service's start function returns, to its own main (cluster mode) and to the embedded runner. */
export interface ServiceHandle {
  readonly name: string;
  /** `host:port` of the service's gRPC server (the gateway's HTTP address for the gateway). */
  readonly address: string;
  /** True once the service can serve: migrations applied, projections caught up enough. */
  isReady(): boolean;
  /** Drains: stops accepting, finishes in-flight work, commits positions, closes what it opened. */
  stop(): Promise<void>;
}

/** Default gRPC ports in cluster mode; the embedded runner uses ephemeral loopback ports. */
export const DEFAULT_GRPC_PORTS = {
  listing: 50051,
  catalog: 50052,
  quote: 50053,
  order: 50054,
  subscription: 50055,
} as const;
