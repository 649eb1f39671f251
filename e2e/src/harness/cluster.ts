import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { ImageServer } from '@marketplace/outbound-http/testing';
import { startImageServer } from '@marketplace/outbound-http/testing';
import { waitForServing } from '@marketplace/rpc';
import { eventually, freePort, ManagedProcess, repoRoot, SHARED_EMBEDDINGS_CACHE_DIR } from './processes.js';
import { MarketplaceClient } from './marketplace-client.js';
import { OwnDatabase } from './own-database.js';
import { RATE_LIMITS_OFF } from './rate-limits.js';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
export const BACKEND_SERVICES = ['listing', 'catalog', 'quote', 'order', 'subscription'] as const;
export type BackendService = (typeof BACKEND_SERVICES)[number];

/** How many processes of a service or the gateway run; the second is named `<name>-2`, and so on. */
export type Replicas = Partial<Record<BackendService | 'gateway', number>>;

const replicaName = (name: string, n: number): string => (n === 1 ? name : `${name}-${n}`);

/**
 * How the gateway dials a service's replicas: one address, or a static list that the gRPC client balances
 * over round robin, as it does over a headless Service's pods in Kubernetes.
 */
const dialTarget = (addresses: readonly string[]): string =>
  addresses.length === 1 ? addresses[0]! : `ipv4:${addresses.join(',')}`;

/** A start that failed; what it had started (the database, these processes) is gone by the time it is thrown. */
export class ClusterStartError extends Error {
  constructor(
    message: string,
    readonly databaseName: string,
    /** The processes still running when the start gave up. */
    readonly pids: readonly number[],
  ) {
    super(message);
  }
}

/**
 * Cluster mode on this machine: every service its own process, a fresh PostgreSQL database, a fresh NATS
 * namespace and a fresh DATA_DIR (shared by the processes, as replicas share a volume) per run, so runs never see
 * each other's data.
 */
export class Cluster {
  /** By name: `catalog`, `catalog-2`... (see `Replicas`). */
  readonly processes = new Map<string, ManagedProcess>();
  /** One client per gateway process; `client` is the first. */
  readonly gateways: MarketplaceClient[] = [];
  readonly adminToken = randomBytes(24).toString('hex');
  /** The cluster's own database, for benches that seed a read model directly. */
  get databaseUrl(): string {
    return this.database.url;
  }

  private constructor(
    readonly client: MarketplaceClient,
    private readonly database: OwnDatabase,
    readonly namespace: string,
    /** Every replica's address, per service. */
    private readonly grpcAddresses: Map<BackendService, string[]>,
    /** Serves the images listings are published with; the listing service is allowed to fetch from it. */
    readonly images: ImageServer,
    /** The processes' DATA_DIR: the `.eml` store of their emails is `mail/` under it. */
    readonly dataDir: string,
    /** Whether `stop()` removes `dataDir` (not when the caller chose it). */
    private readonly ownsDataDir: boolean,
  ) {}

  /**
   * `env` is added to every process's environment (e.g. a short EVENT_LOG_ACK_WAIT_MS for fault runs); a
   * `DATA_DIR` there replaces the temporary one and is kept after `stop()`. `replicas` runs more than one process
   * of a service (the gateway balances over them) or of the gateway.
   */
  static async start(options: { env?: Record<string, string>; replicas?: Replicas } = {}): Promise<Cluster> {
    const replicasOf = (name: BackendService | 'gateway'): number => options.replicas?.[name] ?? 1;
    const suffix = randomBytes(4).toString('hex');
    const database = await OwnDatabase.create(`e2e_${suffix}`);
    const chosenDataDir = options.env?.['DATA_DIR'];
    const dataDir = chosenDataDir ?? (await mkdtemp(join(tmpdir(), 'marketplace-cluster-')));

    const grpcAddresses = new Map<BackendService, string[]>();
    for (const service of BACKEND_SERVICES) {
      const addresses: string[] = [];
      for (let n = 1; n <= replicasOf(service); n++) addresses.push(`127.0.0.1:${await freePort()}`);
      grpcAddresses.set(service, addresses);
    }
    const httpPorts: number[] = [];
    for (let n = 1; n <= replicasOf('gateway'); n++) httpPorts.push(await freePort());
    const targets = Object.fromEntries(
      BACKEND_SERVICES.map((s) => [`${s.toUpperCase()}_GRPC_ADDR`, dialTarget(grpcAddresses.get(s)!)]),
    );
    const cluster = new Cluster(
      new MarketplaceClient(`http://127.0.0.1:${httpPorts[0]!}`),
      database,
      `e2e-${suffix}`,
      grpcAddresses,
      await startImageServer(),
      dataDir,
      chosenDataDir === undefined,
    );
    const shared = {
      DATA_DIR: dataDir,
      EMBEDDINGS_CACHE_DIR: SHARED_EMBEDDINGS_CACHE_DIR,
      DATABASE_URL: database.url,
      EVENT_LOG: 'nats',
      NATS_URL,
      EVENT_LOG_NAMESPACE: cluster.namespace,
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      // The services' shared key for their calls to each other (docs/security.md, "Internal calls").
      INTERNAL_AUTH_KEY: randomBytes(32).toString('base64url'),
      ...RATE_LIMITS_OFF,
      // Services that call others (order: listing and quote) find them under the gateway's names.
      ...targets,
      ...options.env,
    };
    for (const service of BACKEND_SERVICES) {
      grpcAddresses.get(service)!.forEach((address, i) => {
        const name = replicaName(service, i + 1);
        cluster.processes.set(
          name,
          new ManagedProcess(name, join(repoRoot, `services/${service}/dist/src/main.js`), {
            ...shared,
            GRPC_HOST: '127.0.0.1',
            GRPC_PORT: address.split(':')[1] ?? '',
          }),
        );
      });
    }
    httpPorts.forEach((port, i) => {
      const name = replicaName('gateway', i + 1);
      cluster.gateways.push(new MarketplaceClient(`http://127.0.0.1:${port}`));
      cluster.processes.set(
        name,
        new ManagedProcess(name, join(repoRoot, 'services/gateway/dist/src/main.js'), {
          ...shared,
          HOST: '127.0.0.1',
          PORT: String(port),
          ADMIN_TOKEN: cluster.adminToken,
          ...targets,
        }),
      );
    });
    for (const process of cluster.processes.values()) process.start();
    const starting = new AbortController();
    try {
      const exited = await Promise.race([
        cluster.waitUntilReady(starting.signal).then(() => undefined),
        cluster.firstExit(),
      ]);
      if (exited !== undefined)
        throw new ClusterStartError(
          `${exited} exited while the cluster started\n${cluster.describeProcesses()}`,
          database.name,
          [...cluster.processes.values()].flatMap((process) => process.pid ?? []),
        );
    } catch (error) {
      // A start that fails leaves nothing behind: no readiness poll, no process holding PostgreSQL connections,
      // no database.
      starting.abort();
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The name of the first process to exit, once one does. */
  private firstExit(): Promise<string> {
    return Promise.race(
      [...this.processes.values()].map(async (process) => {
        await process.exited();
        return process.name;
      }),
    );
  }

  adminClient(): MarketplaceClient {
    return new MarketplaceClient(this.client.baseUrl, this.adminToken);
  }

  /** `catalog`, `gateway`, or a further replica: `catalog-2`. */
  process(name: string): ManagedProcess {
    const found = this.processes.get(name);
    if (!found) throw new Error(`no process ${name}`);
    return found;
  }

  /** Generous: on a small machine shared with other runs, a service may take minutes to start. */
  async waitForService(service: BackendService, signal?: AbortSignal): Promise<void> {
    for (const address of this.grpcAddresses.get(service) ?? []) {
      await waitForServing(address, { timeoutMs: 180_000, signal });
    }
  }

  async waitUntilReady(signal?: AbortSignal): Promise<void> {
    await Promise.all(BACKEND_SERVICES.map((service) => this.waitForService(service, signal)));
    for (const gateway of this.gateways) {
      await eventually(async () => ((await gateway.isReady()) ? true : undefined), {
        timeoutMs: 180_000,
        intervalMs: 200,
        describe: () => this.describeProcesses(),
        signal,
      });
    }
  }

  describeProcesses(): string {
    return [...this.processes.values()]
      .map((p) => `--- ${p.name} (${p.running ? 'running' : 'exited'})\n${p.logs}`)
      .join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.values()].map((p) => p.stop('SIGTERM')));
    await this.database.drop();
    await deleteNamespaceStreams(this.namespace);
    await this.images.close();
    if (this.ownsDataDir) await rm(this.dataDir, { recursive: true, force: true });
  }
}

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
