import { connectivityState } from '@grpc/grpc-js';
import {
  ClientError,
  createChannel,
  createClientFactory,
  Status,
  type CallOptions,
  type Client,
  type ClientMiddlewareCall,
  type TsProtoServiceDefinition,
} from 'nice-grpc';
import type { DeadlineOptions } from 'nice-grpc-client-middleware-deadline';
import { createClientInterceptor } from './client.interceptor.js';
import { createInProcessClient, isInProcessAddress } from './in-process.js';
import { REPLICA_CHANNEL_OPTIONS } from './replica-balancing.js';

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
  /** Closes the channel; calls made afterwards fail as `unavailable`. */
  close(): void;
}

/**
 * A client on its own channel (or, for an `in-process:` address, calling that server in this process) whose every call carries this process's service token and has a deadline, and
 * whose failures arrive as AppErrors: the server's kind, message and field violations; a passed deadline or an
 * unreachable server as `unavailable`.
 */
export const createGrpcClient = <Definition extends TsProtoServiceDefinition>(
  definition: Definition,
  address: string,
  { deadlineMs = DEFAULT_DEADLINE_MS, repeatableMethods = [] }: GrpcClientOptions = {},
): GrpcClient<Definition> => {
  const interceptor = createClientInterceptor(new Set(repeatableMethods));
  const defaultOptions: { '*': DeadlineOptions } = { '*': { deadline: deadlineMs } };
  if (isInProcessAddress(address)) {
    return createInProcessClient<Definition, DeadlineOptions>(
      definition,
      address,
      interceptor,
      defaultOptions,
    );
  }
  const channel = createChannel(address, undefined, REPLICA_CHANNEL_OPTIONS);
  // A closed grpc-js channel answers a plain Error; as UNAVAILABLE it reaches the caller as the AppError an
  // in-process client's gives. Attached first, so it runs innermost, under the interceptor.
  async function* refuseWhenClosed<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    options: CallOptions,
  ): AsyncGenerator<Response, Response | void, undefined> {
    if (channel.getConnectivityState(false) === connectivityState.SHUTDOWN) {
      throw new ClientError(call.method.path, Status.UNAVAILABLE, 'the client was closed');
    }
    return yield* call.next(call.request, options);
  }
  const client = createClientFactory()
    .use(refuseWhenClosed)
    .use(interceptor)
    .create(definition, channel, defaultOptions);
  return { client, close: () => channel.close() };
};
