import { z } from 'zod';
import { envList } from '@marketplace/platform';

/**
 * The environment variables that choose the infrastructure adapters; one table in the README documents them.
 * Parsed once at start-up: a bad value stops the process with a message naming the variable.
 */
export const infrastructureConfigSchema = z.object({
  /** Absent: the embedded engine (PGlite) under DATA_DIR. */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATA_DIR: z.string().default('./data'),
  EVENT_LOG: z.enum(['embedded', 'nats', 'kafka']).default('embedded'),
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  KAFKA_BROKERS: envList().optional(),
  /** Prefix of every topic on a shared broker (e.g. one per environment); empty: the topics as documented. */
  EVENT_LOG_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_-]*$/, 'lower-case letters, digits, - and _ only')
    .default(''),
  EVENT_LOG_PARTITIONS: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * NATS: how long a consumer's lease on a partition lasts unrenewed, so how long the partitions of a consumer
   * that died wait before another member takes them. Live members renew it three times per period.
   */
  EVENT_LOG_ACK_WAIT_MS: z.coerce.number().int().min(1_000).max(600_000).default(10_000),
  /**
   * The least time between two short batches of one consumer partition (embedded and NATS logs) and between two
   * rounds of an outbox relay (every log). A busy partition hands over what arrived meanwhile as one batch (one
   * transaction), a busy relay publishes what was appended meanwhile in one round, each at most this much later;
   * 0: at once.
   */
  EVENT_LOG_BATCH_INTERVAL_MS: z.coerce.number().int().min(0).max(10_000).default(100),
  /** How long start-up waits for PostgreSQL and the broker before giving up. */
  STARTUP_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(60_000),
  /** How long a drain on SIGTERM may take before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
});

export type InfrastructureConfig = z.infer<typeof infrastructureConfigSchema>;
