import { unavailable } from '@marketplace/platform';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientError, Status, createChannel, createClientFactory } from 'nice-grpc';
import { deadlineMiddleware, type DeadlineOptions } from 'nice-grpc-client-middleware-deadline';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health.js';
import { createInProcessClient, isInProcessAddress } from './in-process.js';
import { REPLICA_CHANNEL_OPTIONS } from './replica-balancing.js';

export interface WaitForServingOptions {
  /** Gives up after this long with an `unavailable` AppError. */
  readonly timeoutMs: number;
  /** A fully qualified service name (`marketplace.listing.v1.ListingService`); the whole server when absent. */
  readonly service?: string;
  /** Stops waiting early (rejects with an AbortError or the signal's reason), e.g. once the awaited process exited. */
  readonly signal?: AbortSignal;
}

/** A grpc.health.v1 client of one server, on a channel of its own that stays open between checks. */
export interface ServingProbe {
  /** Resolves once the server reports SERVING (see `waitForServing`), over the probe's channel. */
  waitForServing(options: WaitForServingOptions): Promise<void>;
  /** Closes the channel; checks made afterwards fail. */
  close(): void;
}

const FIRST_DELAY_MS = 50;
const MAX_DELAY_MS = 1_000;
const NO_ANSWER = 'no answer';

/** A health client of `address`: in process for a server registered there (in-process.ts), else over a channel. */
const healthClient = (address: string) => {
  if (isInProcessAddress(address)) {
    return createInProcessClient<typeof HealthDefinition, DeadlineOptions>(
      HealthDefinition,
      address,
      deadlineMiddleware,
      {},
    );
  }
  const channel = createChannel(address, undefined, {
    ...REPLICA_CHANNEL_OPTIONS,
    'grpc.initial_reconnect_backoff_ms': FIRST_DELAY_MS,
    'grpc.max_reconnect_backoff_ms': MAX_DELAY_MS,
    'grpc.use_local_subchannel_pool': 1,
  });
  const client = createClientFactory().use(deadlineMiddleware).create(HealthDefinition, channel);
  return { client, close: () => channel.close() };
};

/**
 * A probe of the server at `address`, for a process that checks it again and again (the gateway's readiness):
 * every check goes over one connection instead of opening its own. Its channel sees every replica the address
 * resolves to, as the clients' do (replica-balancing.ts), and reconnects as often as a check polls (gRPC's default
 * backoff grows to 2 minutes), on a subchannel of its own, so a client's backoff does not hold it back.
 */
export const createServingProbe = (address: string): ServingProbe => {
  const { client: health, close } = healthClient(address);
  return {
    waitForServing: async ({ timeoutMs, service = '', signal }) => {
      const giveUpAt = Date.now() + timeoutMs;
      let delayMs = FIRST_DELAY_MS;
      let lastAnswer = NO_ANSWER;
      for (;;) {
        signal?.throwIfAborted();
        const remainingMs = giveUpAt - Date.now();
        if (remainingMs <= 0) break;
        try {
          const { status } = await health.check(
            { service },
            { deadline: Math.min(remainingMs, MAX_DELAY_MS) },
          );
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
      throw unavailable(
        `${address} ${service || '(server)'} was not SERVING within ${timeoutMs} ms; last answer: ${lastAnswer}`,
      );
    },
    close,
  };
};

/**
 * Resolves once the server at `address` reports SERVING through grpc.health.v1, polling with exponential
 * backoff, so a service starting before its dependencies waits for them instead of crashing. A one-off wait:
 * its probe is closed when it settles.
 */
export const waitForServing = async (address: string, options: WaitForServingOptions): Promise<void> => {
  const probe = createServingProbe(address);
  try {
    await probe.waitForServing(options);
  } finally {
    probe.close();
  }
};
