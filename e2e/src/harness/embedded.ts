import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImageServer } from '@marketplace/outbound-http/testing';
import { startImageServer } from '@marketplace/outbound-http/testing';
import { eventually, freePort, ManagedProcess, repoRoot, SHARED_EMBEDDINGS_CACHE_DIR } from './processes.js';
import { MarketplaceClient } from './marketplace-client.js';
import { RATE_LIMITS_OFF } from './rate-limits.js';

/**
 * How long start-up may take (E2E_READY_TIMEOUT_MS to change it): generous, as for a cluster, since jest runs
 * one file per core and each may be starting a marketplace on a machine busy with other work.
 */
const READY_TIMEOUT_MS = Number(process.env['E2E_READY_TIMEOUT_MS'] ?? 180_000);

/** The process's output, in its DATA_DIR (read by the files that share one: `shared-marketplace.ts`). */
export const MARKETPLACE_LOG = 'marketplace.log';

/** `pnpm start` as a user runs it: one process, embedded PostgreSQL and log, data under a DATA_DIR. */
export class EmbeddedMarketplace {
  private constructor(
    readonly adminToken: string,
    readonly process: ManagedProcess,
    readonly client: MarketplaceClient,
    readonly dataDir: string,
    /** Serves the images listings are published with; the marketplace is allowed to fetch from it. */
    readonly images: ImageServer,
  ) {}

  /**
   * `env` is added to the process's environment. Rate limits are off unless `env` sets them: suites poll the
   * catalog far faster than an agent may, and the rate-limit suite sets its own small allowances.
   */
  static async start(options: { env?: Record<string, string> } = {}): Promise<EmbeddedMarketplace> {
    const dataDir = await mkdtemp(join(tmpdir(), 'marketplace-e2e-'));
    const port = await freePort();
    const adminToken = randomBytes(24).toString('hex');
    const process = new ManagedProcess(
      'marketplace',
      join(repoRoot, 'runner/dist/src/embedded.main.js'),
      {
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        ADMIN_TOKEN: adminToken,
        OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
        EMBEDDINGS_CACHE_DIR: SHARED_EMBEDDINGS_CACHE_DIR,
        ...RATE_LIMITS_OFF,
        ...options.env,
      },
      join(dataDir, MARKETPLACE_LOG),
    );
    const marketplace = new EmbeddedMarketplace(
      adminToken,
      process,
      new MarketplaceClient(`http://127.0.0.1:${port}`, adminToken),
      dataDir,
      await startImageServer(),
    );
    process.start();
    try {
      await marketplace.waitUntilReady();
    } catch (error) {
      await marketplace.stop(); // a start that failed leaves no process behind
      throw error;
    }
    return marketplace;
  }

  /** `timeoutMs`: longer for a start that loads a large seeded catalog. */
  async waitUntilReady(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    await eventually(async () => ((await this.client.isReady()) ? true : undefined), {
      timeoutMs,
      intervalMs: 100,
      describe: () =>
        `marketplace not ready (${this.process.running ? 'running' : 'exited'}):\n${this.process.logs}`,
    });
  }

  async restart(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    await this.process.stop(signal);
    this.process.start();
    await this.waitUntilReady();
  }

  async stop(): Promise<void> {
    await this.process.stop('SIGTERM');
    await rm(this.dataDir, { recursive: true, force: true });
    await this.images.close();
  }
}
