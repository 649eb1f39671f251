import type { CallContext, ServerMiddlewareCall } from 'nice-grpc-common';

/** What a long-lived streaming method calls to be cancelled when the server shuts down. */
export interface TerminationContext {
  abortOnTerminate(): void;
}

/**
 * Endless streams (the health service's Watch) would hold a graceful shutdown until its bound; this middleware
 * gives them `context.abortOnTerminate()`, the hook nice-grpc-server-health already calls, and `terminate()`
 * aborts every stream that opted in. Unary calls never opt in, so they drain normally.
 */
export const createTermination = () => {
  const optedIn = new Set<AbortController>();
  let terminated = false;

  async function* terminationMiddleware<Request, Response>(
    call: ServerMiddlewareCall<Request, Response, TerminationContext>,
    context: CallContext,
  ): AsyncGenerator<Response, Response | void, undefined> {
    const controller = new AbortController();
    const abortOnTerminate = (): void => {
      if (terminated) controller.abort();
      else optedIn.add(controller);
    };
    try {
      return yield* call.next(call.request, {
        ...context,
        signal: AbortSignal.any([context.signal, controller.signal]),
        abortOnTerminate,
      });
    } finally {
      optedIn.delete(controller);
    }
  }

  const terminate = (): void => {
    terminated = true;
    for (const controller of optedIn) controller.abort();
  };

  return { terminationMiddleware, terminate };
};
