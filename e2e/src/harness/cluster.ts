import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { ImageServer } from '@marketplace/outbound-http/testing';
import { startImageServer } from '@marketplace/outbound-http/testing';
import { waitForServing } from '@marketplace/rpc';
import { eventually, freePort, ManagedProcess, repoRoot } from './processes.js';
import { MarketplaceClient } from './marketplace-client.js';
import { RATE_LIMITS_OFF } from './rate-limits.js';

const SERVER_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
export const BACKEND_SERVICES = ['listing', 'catalog', 'quote', 'order', 'subscription'] as const;
export type BackendService = (typeof BACKEND_SERVICES)[number];

/**
 * Cluster mode on this machine: every service its own process, a fresh PostgreSQL database, a fresh NATS
 * namespace and a fresh DATA_DIR (shared by the processes, as replicas share a volume) per run, so runs never see
 * each other's data.
 */
export class Cluster {
  readonly processes = new Map<BackendService | 'gateway', ManagedProcess>();
  readonly adminToken = randomBytes(24).toString('hex');
  private constructor(
    readonly client: MarketplaceClient,
    private readonly databaseName: string,
    /** The cluster's own database, for benches that seed a read model directly. */
    readonly databaseUrl: string,
    readonly namespace: string,
    private readonly grpcAddresses: Map<BackendService, string>,
    /** Serves the images listings are published with; the listing service is allowed to fetch from it. */
    readonly images: ImageServer,
    /** The processes' DATA_DIR: the `.eml` store of their emails is `mail/` under it. */
    readonly dataDir: string,
    /** Whether `stop()` removes `dataDir` (not when the caller chose it). */
    private readonly ownsDataDir: boolean,
  ) {}

  /**
   * `env` is added to every process's environment (e.g. a short EVENT_LOG_ACK_WAIT_MS for fault runs); a
   * `DATA_DIR` there replaces the temporary one and is kept after `stop()`.
   */
  static async start(options: { env?: Record<string, string> } = {}): Promise<Cluster> {
    const suffix = randomBytes(4).toString('hex');
    const databaseName = `e2e_${suffix}`;
    await withServer((client) => client.query(`CREATE DATABASE ${databaseName}`));
    const chosenDataDir = options.env?.['DATA_DIR'];
    const dataDir = chosenDataDir ?? (await mkdtemp(join(tmpdir(), 'marketplace-cluster-')));
    const databaseUrl = new URL(SERVER_URL);
    databaseUrl.pathname = `/${databaseName}`;

    const grpcAddresses = new Map<BackendService, string>();
    for (const service of BACKEND_SERVICES) grpcAddresses.set(service, `127.0.0.1:${await freePort()}`);
    const httpPort = await freePort();
    const cluster = new Cluster(
      new MarketplaceClient(`http://127.0.0.1:${httpPort}`),
      databaseName,
      databaseUrl.toString(),
      `e2e-${suffix}`,
      grpcAddresses,
      await startImageServer(),
      dataDir,
      chosenDataDir === undefined,
    );
    const shared = {
      DATA_DIR: dataDir,
      // One converted word-vector table for every suite: a fresh DATA_DIR would convert it again at each start.
      EMBEDDINGS_CACHE_DIR: join(tmpdir(), 'marketplace-e2e-embeddings'),
      DATABASE_URL: databaseUrl.toString(),
      EVENT_LOG: 'nats',
      NATS_URL,
      EVENT_LOG_NAMESPACE: cluster.namespace,
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      ...RATE_LIMITS_OFF,
      // Services that call others (order: listing and quote) find them under the gateway's names.
      ...Object.fromEntries(
        BACKEND_SERVICES.map((s) => [`${s.toUpperCase()}_GRPC_ADDR`, grpcAddresses.get(s) ?? '']),
      ),
      ...options.env,
    };
    for (const service of BACKEND_SERVICES) {
      const address = grpcAddresses.get(service) ?? '';
      cluster.processes.set(
        service,
        new ManagedProcess(service, join(repoRoot, `services/${service}/dist/src/main.js`), {
          ...shared,
          GRPC_HOST: '127.0.0.1',
          GRPC_PORT: address.split(':')[1] ?? '',
        }),
      );
    }
    cluster.processes.set(
      'gateway',
      new ManagedProcess('gateway', join(repoRoot, 'services/gateway/dist/src/main.js'), {
        ...shared,
        HOST: '127.0.0.1',
        PORT: String(httpPort),
        ADMIN_TOKEN: cluster.adminToken,
        ...Object.fromEntries(
          BACKEND_SERVICES.map((s) => [`${s.toUpperCase()}_GRPC_ADDR`, grpcAddresses.get(s) ?? '']),
        ),
      }),
    );
    for (const process of cluster.processes.values()) process.start();
    await cluster.waitUntilReady();
    return cluster;
  }

  adminClient(): MarketplaceClient {
    return new MarketplaceClient(this.client.baseUrl, this.adminToken);
  }

  process(name: BackendService | 'gateway'): ManagedProcess {
    const found = this.processes.get(name);
    if (!found) throw new Error(`no process ${name}`);
    return found;
  }

  /** Generous: on a small machine shared with other runs, a service may take minutes to start. */
  async waitForService(service: BackendService): Promise<void> {
    await waitForServing(this.grpcAddresses.get(service) ?? '', { timeoutMs: 180_000 });
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all(BACKEND_SERVICES.map((service) => this.waitForService(service)));
    await eventually(async () => ((await this.client.isReady()) ? true : undefined), {
      timeoutMs: 180_000,
      intervalMs: 200,
      describe: () => this.describeProcesses(),
    });
  }

  describeProcesses(): string {
    return [...this.processes.values()]
      .map((p) => `--- ${p.name} (${p.running ? 'running' : 'exited'})\n${p.logs}`)
      .join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.values()].map((p) => p.stop('SIGTERM')));
    await withServer((client) => client.query(`DROP DATABASE IF EXISTS ${this.databaseName} WITH (FORCE)`));
    await deleteNamespaceStreams(this.namespace);
    await this.images.close();
    if (this.ownsDataDir) await rm(this.dataDir, { recursive: true, force: true });
  }
}

const withServer = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
};

/** Removes the JetStream streams a run created, so CI machines do not accumulate them. */
export const deleteNamespaceStreams = async (namespace: string): Promise<void> => {
  const connection = await connect({ servers: NATS_URL, timeout: 5_000 });
  try {
    const manager = await jetstreamManager(connection);
    for await (const stream of manager.streams.list()) {
      if (stream.config.subjects.some((subject) => subject.startsWith(`${namespace}.`))) {
        await manager.streams.delete(stream.config.name);
      }
    }
  } finally {
    await connection.close();
  }
};
