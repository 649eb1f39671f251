import { ConfigError, createLogger, parseEnv } from '@marketplace/platform';
import {
  createInfrastructure,
  DataDirLockedError,
  drain,
  lockDataDir,
  onShutdownSignal,
} from '@marketplace/runtime';
import { embeddedConfigSchema } from './embedded.config.js';
import { startMarketplace } from './marketplace.js';

const logger = createLogger({ service: 'marketplace' });

const main = async (): Promise<void> => {
  const config = parseEnv(embeddedConfigSchema);
  // One marketplace per data directory: two would share one embedded database. Released at exit.
  lockDataDir(config.DATA_DIR);
  const infrastructure = await createInfrastructure(config, logger, 'marketplace');
  let handles;
  try {
    handles = await startMarketplace(infrastructure, config);
  } catch (error) {
    await infrastructure.close();
    throw error;
  }
  const gateway = handles.at(-1);
  logger.info({ address: gateway?.address, dataDir: config.DATA_DIR }, 'marketplace started');
  onShutdownSignal(() =>
    drain(handles, { timeoutMs: config.SHUTDOWN_TIMEOUT_MS, logger, finally: () => infrastructure.close() }),
  );
};

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`marketplace: ${error.message}\n`);
    process.exit(2);
  }
  if (error instanceof DataDirLockedError) {
    process.stderr.write(`marketplace: ${error.message}\n`);
    process.exit(1);
  }
  logger.fatal({ err: error }, 'marketplace failed to start');
  process.exit(1);
});
