import type { ChannelOptions } from '@grpc/grpc-js';

/**
 * Channel options of every client: calls go round robin over every address the target resolves to (the pods
 * behind a headless Service, `dns:///<name>.<namespace>.svc:<port>`), and a connection that fails makes the
 * channel resolve the name again, at most every `grpc.dns_min_time_between_resolutions_ms`. A plain `host:port`
 * is one address: the same client works unchanged outside Kubernetes. docs/operations.md, "Scaling".
 */
export const REPLICA_CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  'grpc.dns_min_time_between_resolutions_ms': 2_000,
};

/**
 * Server side of the same: a connection lives at most this long, then the server closes it gracefully, so
 * clients resolve the name again and new pods (a scale-up) get their share of the calls.
 */
export const REPLICA_SERVER_OPTIONS: ChannelOptions = {
  'grpc.max_connection_age_ms': 60_000,
  'grpc.max_connection_age_grace_ms': 30_000,
};
