import { unavailable } from '@marketplace/platform';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientError, Status, createChannel, createClientFactory } from 'nice-grpc';
import { deadlineMiddleware, type DeadlineOptions } from 'nice-grpc-client-middleware-deadline';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health.js';
import { createInProcessClient, isInProcessAddress } from './in-process.js';

export interface WaitForServingOptions {
  /** Gives up after this long with an `unavailable` AppError. */
  readonly timeoutMs: number;
  /** A fully qualified service name (`marketplace.listing.v1.ListingService`); the whole server when absent. */
  readonly service?: string;
  /** Stops waiting early (rejects with an AbortError or the signal's reason), e.g. once the awaited process exited. */
  readonly signal?: AbortSignal;
}

const FIRST_DELAY_MS = 50;
const MAX_DELAY_MS = 1_000;
const NO_ANSWER = 'no answer';

const healthClient = (address: string) => {
  if (isInProcessAddress(address)) {
    return createInProcessClient<typeof HealthDefinition, DeadlineOptions>(
      HealthDefinition,
      address,
      deadlineMiddleware,
      {},
    );
  }
  // A fresh subchannel that retries connecting as often as we poll (gRPC's default backoff grows to 2 minutes).
  const channel = createChannel(address, undefined, {
    'grpc.initial_reconnect_backoff_ms': FIRST_DELAY_MS,
    'grpc.max_reconnect_backoff_ms': MAX_DELAY_MS,
    'grpc.use_local_subchannel_pool': 1,
  });
  const client = createClientFactory().use(deadlineMiddleware).create(HealthDefinition, channel);
  return { client, close: () => channel.close() };
};

/**
 * Resolves once the server at `address` reports SERVING through grpc.health.v1, polling with exponential
 * backoff, so a service starting before its dependencies waits for them instead of crashing.
 */
export const waitForServing = async (
  address: string,
  { timeoutMs, service = '', signal }: WaitForServingOptions,
): Promise<void> => {
  const { client: health, close } = healthClient(address);
  const giveUpAt = Date.now() + timeoutMs;
  let delayMs = FIRST_DELAY_MS;
  let lastAnswer = NO_ANSWER;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const remainingMs = giveUpAt - Date.now();
      if (remainingMs <= 0) break;
      try {
        const { status } = await health.check({ service }, { deadline: Math.min(remainingMs, MAX_DELAY_MS) });
        if (status === HealthCheckResponse_ServingStatus.SERVING) return;
        lastAnswer = HealthCheckResponse_ServingStatus[status];
      } catch (error) {
        if (!(error instanceof ClientError)) throw error;
        // A check that ran out of time is no answer; keep the server's last real one (NOT_SERVING, UNAVAILABLE...).
        if (error.code !== Status.DEADLINE_EXCEEDED || lastAnswer === NO_ANSWER) {
          lastAnswer = `${Status[error.code]}: ${error.details}`;
        }
      }
      await sleep(Math.max(0, Math.min(delayMs, giveUpAt - Date.now())), undefined, { signal });
      delayMs = Math.min(delayMs * 2, MAX_DELAY_MS);
    }
  } finally {
    close();
  }
  throw unavailable(
    `${address} ${service || '(server)'} was not SERVING within ${timeoutMs} ms; last answer: ${lastAnswer}`,
  );
};
