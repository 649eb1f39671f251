import { join } from 'node:path';
import type { Clock, Logger } from '@marketplace/platform';
import { systemClock } from '@marketplace/platform';
import type { Database } from '@marketplace/database';
import { createEmbeddedDatabase, createPostgresDatabase, waitForDatabase } from '@marketplace/database';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog, createKafkaEventLog, createNatsEventLog } from '@marketplace/eventlog';
import { tracedEventLog } from '@marketplace/telemetry';
import type { InfrastructureConfig } from './infrastructure.config.js';
import { namespacedEventLog } from './namespaced-event-log.js';
import { retryDuringStartup } from './startup-retry.js';

/** What a service's start function receives: the adapters chosen by configuration. */
export interface Infrastructure {
  readonly db: Database;
  readonly log: EventLog;
  readonly logger: Logger;
  readonly clock: Clock;
  /**
   * EVENT_LOG_BATCH_INTERVAL_MS for the services' outbox relays (the log's consumers take it from the log):
   * the least time between two rounds of a busy relay. Absent: the relay's default, the same 100 ms.
   */
  readonly relayBatchIntervalMs?: number;
}

/** What a backend service's start function takes: the infrastructure and where to serve gRPC. */
export interface ServiceDependencies extends Infrastructure {
  /** Port 0 binds a free ephemeral port; the handle's address names the one chosen. */
  readonly grpc: { readonly host: string; readonly port: number };
}

export interface InfrastructureOptions {
  /**
   * Wraps the database before anything uses it (the embedded event log included): the work-count tests count
   * statements and commits through it (runner/test/work-budget.int.test.ts).
   */
  readonly decorateDatabase?: (db: Database) => Database;
}

export interface OwnedInfrastructure extends Infrastructure {
  /** Closes the log, then the database. */
  close(): Promise<void>;
}

/**
 * Opens the database and the event log that the configuration names, waiting for each with backoff up to
 * STARTUP_TIMEOUT_MS (a broker that is not up yet is retried, not fatal).
 */
export const createInfrastructure = async (
  config: InfrastructureConfig,
  logger: Logger,
  serviceName: string,
  options: InfrastructureOptions = {},
): Promise<OwnedInfrastructure> => {
  if (config.EVENT_LOG === 'kafka' && !config.KAFKA_BROKERS?.length) {
    throw new Error('KAFKA_BROKERS is required when EVENT_LOG=kafka');
  }
  const opened = config.DATABASE_URL
    ? createPostgresDatabase({ url: config.DATABASE_URL, applicationName: serviceName, logger })
    : await createEmbeddedDatabase({ dataDir: join(config.DATA_DIR, 'postgres') });
  const db = options.decorateDatabase?.(opened) ?? opened;
  try {
    await waitForDatabase(db, { timeoutMs: config.STARTUP_TIMEOUT_MS });
    const opened = await retryDuringStartup(() => openEventLog(config, db, serviceName, logger), {
      timeoutMs: config.STARTUP_TIMEOUT_MS,
      logger,
      what: `the event log (${config.EVENT_LOG})`,
    });
    const log = tracedEventLog(namespacedEventLog(opened, config.EVENT_LOG_NAMESPACE));
    return {
      db,
      log,
      logger,
      clock: systemClock,
      relayBatchIntervalMs: config.EVENT_LOG_BATCH_INTERVAL_MS,
      close: async () => {
        await log.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
};

const openEventLog = async (
  config: InfrastructureConfig,
  db: Database,
  serviceName: string,
  logger: Logger,
): Promise<EventLog> => {
  switch (config.EVENT_LOG) {
    case 'embedded':
      return createEmbeddedEventLog({
        db,
        partitions: config.EVENT_LOG_PARTITIONS,
        batchIntervalMs: config.EVENT_LOG_BATCH_INTERVAL_MS,
        logger,
        // One process per PGlite data directory: whatever it finds claimed is left by a run that died.
        soleProcess: db.engine === 'pglite',
      });
    case 'nats':
      return createNatsEventLog({
        servers: config.NATS_URL,
        partitions: config.EVENT_LOG_PARTITIONS,
        connectTimeoutMs: config.STARTUP_TIMEOUT_MS,
        db,
        leaseMs: config.EVENT_LOG_ACK_WAIT_MS,
        batchIntervalMs: config.EVENT_LOG_BATCH_INTERVAL_MS,
        logger,
      });
    case 'kafka':
      return createKafkaEventLog({
        brokers: config.KAFKA_BROKERS ?? [],
        clientId: `marketplace-${serviceName}`,
        partitions: config.EVENT_LOG_PARTITIONS,
        logger,
      });
  }
};
