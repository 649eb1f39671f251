import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImageServer } from '@marketplace/outbound-http/testing';
import { startImageServer } from '@marketplace/outbound-http/testing';
import { EmbeddedMarketplace, MARKETPLACE_LOG } from './embedded.js';
import { MarketplaceClient } from './marketplace-client.js';

/**
 * One embedded marketplace, started by the e2e project's jest global set-up, for every end-to-end file that can
 * share it: default configuration (no `env`), no restart, and assertions about its own accounts and listings
 * only (never a global count), since other files write to it at the same time. Each file gets its own image
 * server (the marketplace fetches from any 127.0.0.1 port), so counting image fetches stays per file.
 */
const SHARED_ENV = 'E2E_SHARED_MARKETPLACE';

interface SharedAddress {
  readonly baseUrl: string;
  readonly adminToken: string;
  readonly dataDir: string;
  readonly pid: number;
}

/** A marketplace a test file uses: its own, or the shared one. */
export interface E2eMarketplace {
  readonly client: MarketplaceClient;
  readonly adminToken: string;
  readonly images: ImageServer;
  /** The marketplace process's id (its listening ports are read from /proc). */
  readonly pid: number;
  /** The marketplace's latest output, for failure messages. */
  logs(): string;
  /** Releases what this file holds (the shared marketplace itself runs on until jest's global teardown). */
  stop(): Promise<void>;
}

/** The global set-up's part: starts the shared marketplace and publishes its address to the workers. */
export const startSharedMarketplace = async (): Promise<EmbeddedMarketplace> => {
  const marketplace = await EmbeddedMarketplace.start();
  const pid = marketplace.process.pid;
  if (pid === undefined) throw new Error('the shared marketplace is not running');
  const address: SharedAddress = {
    baseUrl: marketplace.client.baseUrl,
    adminToken: marketplace.adminToken,
    dataDir: marketplace.dataDir,
    pid,
  };
  process.env[SHARED_ENV] = JSON.stringify(address);
  return marketplace;
};

/** In a test file's `beforeAll`: the shared marketplace, with an image server of the file's own. */
export const sharedMarketplace = async (): Promise<E2eMarketplace> => {
  const published = process.env[SHARED_ENV];
  if (published === undefined) {
    throw new Error(`${SHARED_ENV} is not set: the e2e project's globalSetup (e2e/jest.config.js) starts it`);
  }
  const { baseUrl, adminToken, dataDir, pid } = JSON.parse(published) as SharedAddress;
  const images = await startImageServer();
  return {
    client: new MarketplaceClient(baseUrl, adminToken),
    adminToken,
    images,
    pid,
    logs: () => readFileSync(join(dataDir, MARKETPLACE_LOG), 'utf8').slice(-20_000),
    stop: () => images.close(),
  };
};
