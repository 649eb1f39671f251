import { grpcClientTelemetry } from '@marketplace/telemetry';
import { createChannel, createClientFactory, type Client, type TsProtoServiceDefinition } from 'nice-grpc';
import { deadlineMiddleware, type DeadlineOptions } from 'nice-grpc-client-middleware-deadline';
import { errorDetailsClientMiddleware } from 'nice-grpc-error-details';
import { appErrorClientMiddleware } from './app-error.client-middleware.js';
import { internalAuthClientMiddleware } from './internal-auth.middleware.js';
import { REPLICA_CHANNEL_OPTIONS, retryOnUnavailableMiddleware } from './replica-balancing.js';

export const DEFAULT_DEADLINE_MS = 5_000;

export interface GrpcClientOptions {
  /** Deadline of every call unless the call passes its own `{ deadline }` (ms from now, or a Date). */
  readonly deadlineMs?: number;
  /**
   * Methods (`SearchProducts`) that change nothing, so a call that found its replica gone (`UNAVAILABLE`) is
   * sent once more; calls carrying an idempotency key are repeated too (replica-balancing.ts).
   */
  readonly repeatableMethods?: readonly string[];
}

export interface GrpcClient<Definition extends TsProtoServiceDefinition> {
  /** Methods as generated (`client.createListing(request, { deadline?, signal?, metadata? })`). */
  readonly client: Client<Definition, DeadlineOptions>;
  /** Closes the channel; calls made afterwards fail. */
  close(): void;
}

/**
 * A client on its own channel whose every call carries this process's service token and has a deadline, and
 * whose failures arrive as AppErrors: the server's kind, message and field violations; a passed deadline or an
 * unreachable server as `unavailable`.
 */
export const createGrpcClient = <Definition extends TsProtoServiceDefinition>(
  definition: Definition,
  address: string,
  { deadlineMs = DEFAULT_DEADLINE_MS, repeatableMethods = [] }: GrpcClientOptions = {},
): GrpcClient<Definition> => {
  const channel = createChannel(address, undefined, REPLICA_CHANNEL_OPTIONS);
  // The middleware attached last runs outermost: the AppError mapping sees the details and the deadline errors.
  // Telemetry innermost: it sends the trace context and sees the transport's status codes. Next the service
  // token (docs/security.md, "Internal calls"), then the retry, inside the deadline: both attempts share it and
  // each carries a token.
  const client = createClientFactory()
    .use(grpcClientTelemetry)
    .use(internalAuthClientMiddleware)
    .use(retryOnUnavailableMiddleware(new Set(repeatableMethods)))
    .use(deadlineMiddleware)
    .use(errorDetailsClientMiddleware)
    .use(appErrorClientMiddleware)
    .create(definition, channel, { '*': { deadline: deadlineMs } });
  return { client, close: () => channel.close() };
};
