import { join } from 'node:path';
import type { Database } from '@marketplace/database';
import { createEmbeddedDatabase, createPostgresDatabase } from '@marketplace/database';
import type { MarketplaceClient } from '@marketplace/e2e';
import { Cluster, EmbeddedMarketplace } from '@marketplace/e2e';
import type { CpuTargets } from './process-cpu.js';
import { clusterCpuTargets } from './process-cpu.js';

/**
 * The two ways the marketplace runs, which every scenario is measured against:
 * - `cluster-nats`: every service its own process, on the local PostgreSQL and NATS (what Kubernetes runs);
 * - `embedded`: `pnpm start` as a new user runs it, one process with the embedded PostgreSQL (PGlite) and log.
 */
export const BENCH_MODES = ['cluster-nats', 'embedded'] as const;
export type BenchMode = (typeof BENCH_MODES)[number];

/** What a scenario needs of a running marketplace, however it runs. */
export interface RunningMarketplace {
  readonly mode: BenchMode;
  /** Anonymous client of the gateway (scenarios pass API keys per request). */
  readonly client: MarketplaceClient;
  /** Client with the operator's token: accounts and keys. */
  readonly admin: MarketplaceClient;
  /** An image URL the marketplace is allowed to fetch (the harness's image server). */
  readonly imageUrl: (name: string) => string;
  /** Connections the image server accepted so far (the fetches reuse them). */
  readonly imageConnections: () => number;
  /** Where the quote emails' `.eml` files land. */
  readonly mailDirectory: string;
  /** Its processes, for the CPU each operation costs them. */
  readonly cpuTargets: () => CpuTargets;
  /** The system of record's connection string, in cluster mode (embedded PostgreSQL lives inside the process). */
  readonly databaseUrl: string | undefined;
  /**
   * Stops the catalog, runs `work` on the system of record (e.g. writing the catalog's read model directly),
   * then starts the catalog again and waits until the marketplace is ready: the catalog loads its indexes from
   * its table at start. In embedded mode the whole process stops, as PGlite admits one process per directory.
   */
  withCatalogStopped<T>(work: (db: Database) => Promise<T>): Promise<T>;
  /** Stops the processes and removes what the run wrote. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Added to every process's environment (e.g. raised rate limits, `EMBEDDINGS_PROVIDER: 'none'`). */
  readonly env?: Record<string, string>;
}

/** A restart may load a large seeded catalog: as long as the cluster harness waits for any start. */
const RELOAD_TIMEOUT_MS = 180_000;

/** Opens the database, runs `work`, closes it; then starts what was stopped. */
const offline = async <T>(
  open: () => Promise<Database>,
  work: (db: Database) => Promise<T>,
  restart: () => Promise<void>,
): Promise<T> => {
  const db = await open();
  let result: T;
  try {
    result = await work(db);
  } finally {
    await db.close();
  }
  await restart();
  return result;
};

/** Starts the marketplace in `mode` with its data under a fresh directory, and waits until it is ready. */
export const startMarketplace = async (
  mode: BenchMode,
  { env = {} }: StartOptions = {},
): Promise<RunningMarketplace> => {
  if (mode === 'embedded') {
    const marketplace = await EmbeddedMarketplace.start({ env });
    return {
      mode,
      client: marketplace.client,
      admin: marketplace.client,
      imageUrl: (name) => marketplace.images.imageUrl(name),
      imageConnections: () => marketplace.images.connections(),
      mailDirectory: join(marketplace.dataDir, 'mail'),
      cpuTargets: () => ({
        pids: new Map(
          marketplace.process.pid === undefined ? [] : [['marketplace', marketplace.process.pid]],
        ),
      }),
      databaseUrl: undefined,
      withCatalogStopped: async (work) => {
        await marketplace.process.stop('SIGTERM');
        return offline(
          // Where the runtime keeps the embedded PostgreSQL: `postgres/` under DATA_DIR.
          () => createEmbeddedDatabase({ dataDir: join(marketplace.dataDir, 'postgres') }),
          work,
          async () => {
            marketplace.process.start();
            await marketplace.waitUntilReady(RELOAD_TIMEOUT_MS);
          },
        );
      },
      stop: () => marketplace.stop(),
    };
  }
  const cluster = await Cluster.start({ env });
  return {
    mode,
    client: cluster.client,
    admin: cluster.adminClient(),
    imageUrl: (name) => cluster.images.imageUrl(name),
    imageConnections: () => cluster.images.connections(),
    mailDirectory: join(cluster.dataDir, 'mail'),
    cpuTargets: () => clusterCpuTargets(cluster),
    databaseUrl: cluster.databaseUrl,
    withCatalogStopped: async (work) => {
      const catalog = cluster.process('catalog');
      await catalog.stop('SIGTERM');
      return offline(
        async () => createPostgresDatabase({ url: cluster.databaseUrl, applicationName: 'bench' }),
        work,
        async () => {
          catalog.start();
          await cluster.waitUntilReady();
        },
      );
    },
    stop: () => cluster.stop(),
  };
};

/** Runs `work` against a marketplace started in `mode`, and stops it whatever happens. */
export const withMarketplace = async <T>(
  mode: BenchMode,
  options: StartOptions,
  work: (marketplace: RunningMarketplace) => Promise<T>,
): Promise<T> => {
  const marketplace = await startMarketplace(mode, options);
  try {
    return await work(marketplace);
  } finally {
    await marketplace.stop();
  }
};
