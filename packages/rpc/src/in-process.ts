import { AsyncResource } from 'node:async_hooks';
import type { Client, ServiceImplementation, TsProtoServiceDefinition } from 'nice-grpc';
import {
  ClientError,
  Metadata,
  ServerError,
  Status,
  type CallContext,
  type CallOptions,
  type ClientMiddleware,
  type MethodDescriptor,
  type ServerMiddleware,
} from 'nice-grpc-common';

/**
 * The host that makes `startGrpcServer` serve its services to this process only, and the addresses it gives
 * (`in-process:3`), which `createGrpcClient` and `waitForServing` call without a socket: the embedded runner's
 * transport (docs/architecture.md, "In-process calls"). Everything else a call goes through is the same: both
 * interceptors, the messages encoded and decoded, statuses, trailers, deadlines and cancellation.
 */
export const IN_PROCESS_HOST = 'in-process';
const ADDRESS_PREFIX = `${IN_PROCESS_HOST}:`;

/** gRPC's default bound on a received message; what a call over a socket is refused beyond (RESOURCE_EXHAUSTED). */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export const isInProcessAddress = (address: string): boolean => address.startsWith(ADDRESS_PREFIX);

interface MessageType {
  readonly encode: (message: unknown) => { finish(): Uint8Array };
  readonly decode: (bytes: Uint8Array) => unknown;
  /** Absent in older generated code (grpc.health.v1's). */
  readonly fromPartial?: (partial: unknown) => unknown;
}

/** The message with its defaults, as nice-grpc encodes what a caller passed. */
const completed = (type: MessageType, message: unknown): unknown =>
  type.fromPartial === undefined ? message : type.fromPartial(message);

/** A method of a ts-proto definition: its path, and its messages' encoding as nice-grpc's channel does it. */
interface UnaryMethod {
  readonly name: string;
  readonly path: string;
  readonly unary: boolean;
  /** What middleware sees of the method. */
  readonly descriptor: MethodDescriptor;
  readonly requestSerialize: (request: unknown) => Uint8Array;
  readonly requestDeserialize: (bytes: Uint8Array) => unknown;
  readonly responseSerialize: (response: unknown) => Uint8Array;
  readonly responseDeserialize: (bytes: Uint8Array) => unknown;
}

const methodsOf = (definition: TsProtoServiceDefinition): UnaryMethod[] =>
  Object.entries(definition.methods).map(([name, method]) => {
    const requestType = method.requestType as MessageType;
    const responseType = method.responseType as MessageType;
    const path = `/${definition.fullName}/${method.name}`;
    return {
      name,
      path,
      unary: !method.requestStream && !method.responseStream,
      descriptor: { path, requestStream: false, responseStream: false, options: method.options },
      requestSerialize: (request) => requestType.encode(completed(requestType, request)).finish(),
      requestDeserialize: (bytes) => requestType.decode(bytes),
      responseSerialize: (response) => responseType.encode(completed(responseType, response)).finish(),
      responseDeserialize: (bytes) => responseType.decode(bytes),
    };
  });

type UnaryImplementation = (request: unknown, context: CallContext) => Promise<unknown>;
type Handler = (request: unknown, context: CallContext) => AsyncIterable<unknown>;

/** How a call ended; `answered` when its handler did (not cancelled), so header and trailer were sent. */
type Outcome =
  | { readonly response: unknown; readonly answered: true }
  | { readonly error: Error; readonly answered?: true };

interface InProcessServer {
  call(method: UnaryMethod, request: unknown, caller: CallOptions): Promise<unknown>;
}

/** The servers of this process by address. */
const servers = new Map<string, InProcessServer>();
let lastId = 0;

/** A Buffer over the bytes, as gRPC hands them to a decoder (bytes fields then decode as Buffers too). */
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** What a client receives of a message: it encoded as over a socket, within the size bound, then decoded. */
const transferred = <T>(path: string, bytes: Uint8Array, decode: (bytes: Uint8Array) => T): T => {
  if (bytes.byteLength > MAX_MESSAGE_BYTES) {
    throw new ClientError(
      path,
      Status.RESOURCE_EXHAUSTED,
      `Received message larger than max (${bytes.byteLength} vs. ${MAX_MESSAGE_BYTES})`,
    );
  }
  return decode(asBuffer(bytes));
};

/** The one message a unary middleware chain returns; the same checks as nice-grpc's. */
const unaryResult = async (iterable: AsyncIterable<unknown>): Promise<unknown> => {
  const iterator = iterable[Symbol.asyncIterator]();
  let result = await iterator.next();
  for (;;) {
    if (!result.done) {
      result = await iterator.throw!(
        new Error('A middleware yielded a message, but a unary method returns one'),
      );
      continue;
    }
    if (result.value == null) {
      result = await iterator.throw!(
        new Error('A middleware returned void, but a unary method returns a message'),
      );
      continue;
    }
    return result.value;
  }
};

const isAbortError = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'name' in error && error.name === 'AbortError';

/** The status a client sees for what a handler threw, as a gRPC server sends it. */
const clientErrorOf = (path: string, error: unknown): ClientError =>
  error instanceof ServerError
    ? new ClientError(path, error.code, error.details)
    : isAbortError(error)
      ? new ClientError(path, Status.CANCELLED, 'The operation was cancelled')
      : new ClientError(path, Status.UNKNOWN, 'Unknown server error occurred');

const abortReason = (signal: AbortSignal): Error =>
  (signal.reason as Error | undefined) ??
  Object.assign(new Error('The operation has been aborted'), { name: 'AbortError' });

/** The part of nice-grpc's Server that `startGrpcServer` uses, which the in-process server has too. */
export interface ServerTransport {
  add<Service extends TsProtoServiceDefinition>(
    definition: Service,
    implementation: ServiceImplementation<Service>,
  ): void;
  /** Registers the server; the returned number is its address's (`in-process:<n>`). */
  listen(address: string): Promise<number>;
  /** Takes no new calls and waits for the running ones. */
  shutdown(): Promise<void>;
  /** Cancels the running calls: their handlers' signals abort and their callers get CANCELLED. */
  forceShutdown(): void;
}

/**
 * A server whose calls arrive from this process's in-process clients. Unary methods only (streams answer
 * UNIMPLEMENTED): no service of ours streams, and health's Watch is for Kubernetes. Handlers run in the async
 * context the server was started in, not the caller's, as behind a socket: a caller's transaction scope or trace
 * does not leak into them (the trace continues through `traceparent`, as over the wire).
 */
export const createInProcessServer = (middleware: ServerMiddleware): ServerTransport => {
  const handlers = new Map<string, Handler>();
  /** What cancels each running call. */
  const running = new Set<() => void>();
  let idle: (() => void) | undefined;
  let address: string | undefined;
  let scope: AsyncResource | undefined;

  const call = async (method: UnaryMethod, request: unknown, caller: CallOptions): Promise<unknown> => {
    const { path } = method;
    const handler = handlers.get(path);
    if (handler === undefined || scope === undefined) {
      throw new ClientError(path, Status.UNIMPLEMENTED, `The server does not implement the method ${path}`);
    }
    const callScope = scope;
    const received = transferred(path, method.requestSerialize(request), method.requestDeserialize);
    const callerSignal = caller.signal ?? new AbortController().signal;
    const controller = new AbortController();
    const context: CallContext = {
      metadata: caller.metadata ?? Metadata(),
      peer: IN_PROCESS_HOST,
      header: Metadata(),
      sendHeader: () => undefined,
      trailer: Metadata(),
      signal: controller.signal,
    };
    const outcome = await new Promise<Outcome>((resolve) => {
      let settled = false;
      const settle = (ended: Outcome): void => {
        if (settled) return;
        settled = true;
        callerSignal.removeEventListener('abort', cancel);
        running.delete(forceCancel);
        if (running.size === 0) idle?.();
        resolve(ended);
      };
      const cancel = (): void => {
        controller.abort();
        settle({ error: abortReason(callerSignal) });
      };
      const forceCancel = (): void => {
        controller.abort();
        settle({ error: new ClientError(path, Status.CANCELLED, 'The server was shut down') });
      };
      callerSignal.addEventListener('abort', cancel, { once: true });
      running.add(forceCancel);
      callScope
        .runInAsyncScope(() => unaryResult(handler(received, context)))
        .then(
          (response) => settle({ response, answered: true }),
          (error: unknown) => settle({ error: clientErrorOf(path, error), answered: true }),
        );
    });
    if (outcome.answered === true) {
      caller.onHeader?.(context.header);
      caller.onTrailer?.(context.trailer);
    }
    if ('error' in outcome) throw outcome.error;
    return transferred(path, method.responseSerialize(outcome.response), method.responseDeserialize);
  };

  const stop = (): void => {
    if (address !== undefined) servers.delete(address);
  };

  return {
    add(definition, implementation) {
      const implementations = implementation as unknown as Record<string, UnaryImplementation>;
      for (const method of methodsOf(definition)) {
        if (!method.unary) continue;
        const implement = implementations[method.name]!.bind(implementation);
        // eslint-disable-next-line require-yield -- a unary handler returns its one message, as nice-grpc's does
        async function* unaryHandler(request: unknown, context: CallContext): AsyncGenerator<never, unknown> {
          return await implement(request, context);
        }
        handlers.set(method.path, (request, context) =>
          middleware(
            {
              method: method.descriptor,
              requestStream: false,
              request,
              responseStream: false,
              next: unaryHandler,
            },
            context,
          ),
        );
      }
    },
    async listen() {
      const id = ++lastId;
      address = `${ADDRESS_PREFIX}${id}`;
      scope = new AsyncResource('InProcessGrpcServer');
      servers.set(address, { call });
      return id;
    },
    async shutdown() {
      stop();
      if (running.size > 0) await new Promise<void>((resolve) => (idle = resolve));
    },
    forceShutdown() {
      stop();
      for (const forceCancel of [...running]) forceCancel();
    },
  };
};

/**
 * A client of the in-process server at `address`, with the same methods, middleware and default call options as
 * one nice-grpc makes on a channel. A call to a server that is not (or no longer) there fails UNAVAILABLE, as on a
 * socket nobody listens on.
 */
export const createInProcessClient = <Definition extends TsProtoServiceDefinition, CallOptionsExt>(
  definition: Definition,
  address: string,
  middleware: ClientMiddleware<CallOptionsExt>,
  defaultCallOptions: { readonly '*'?: CallOptions & Partial<CallOptionsExt> },
): { readonly client: Client<Definition, CallOptionsExt>; readonly close: () => void } => {
  let closed = false;
  const client: Record<string, unknown> = {};
  for (const method of methodsOf(definition)) {
    const { name, path } = method;
    if (!method.unary) {
      client[name] = () => {
        throw new Error(`${path}: in-process calls are unary only`);
      };
      continue;
    }
    // eslint-disable-next-line require-yield -- a unary call returns its one message, as nice-grpc's does
    async function* unaryCall(request: unknown, options: CallOptions): AsyncGenerator<never, unknown> {
      if (options.signal?.aborted === true) throw abortReason(options.signal);
      const server = closed ? undefined : servers.get(address);
      if (server === undefined) {
        throw new ClientError(
          path,
          Status.UNAVAILABLE,
          `No connection established: nothing serves ${address}`,
        );
      }
      return await server.call(method, request, options);
    }
    client[name] = (request: unknown, options?: CallOptions & Partial<CallOptionsExt>) =>
      unaryResult(
        middleware(
          {
            method: method.descriptor,
            requestStream: false,
            request,
            responseStream: false,
            next: unaryCall,
          },
          { ...defaultCallOptions['*'], ...options } as CallOptions & CallOptionsExt,
        ),
      );
  }
  return {
    client: client as Client<Definition, CallOptionsExt>,
    close: () => {
      closed = true;
    },
  };
};
