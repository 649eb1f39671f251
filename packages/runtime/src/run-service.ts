import type { z } from 'zod';
import type { ServiceHandle } from '@marketplace/platform';
import { ConfigError, createLogger, parseEnv } from '@marketplace/platform';
import type { Infrastructure } from './infrastructure.js';
import { createInfrastructure } from './infrastructure.js';
import { infrastructureConfigSchema } from './infrastructure.config.js';
import { drain, onShutdownSignal } from './lifecycle.js';

export interface ServiceMainOptions<S extends z.ZodObject> {
  readonly name: string;
  /** The service's own variables; merged with the infrastructure variables and parsed once. */
  readonly configSchema: S;
  readonly start: (infrastructure: Infrastructure, config: z.infer<S>) => Promise<ServiceHandle>;
}

/**
 * The cluster-mode main of one service: parse the environment, open the infrastructure (waiting for it), start,
 * and drain on SIGTERM. A configuration error exits with status 2 and names the variable.
 */
export const runServiceMain = <S extends z.ZodObject>(options: ServiceMainOptions<S>): void => {
  const logger = createLogger({ service: options.name });
  let config: z.infer<typeof infrastructureConfigSchema> & z.infer<S>;
  try {
    config = parseEnv(infrastructureConfigSchema.extend(options.configSchema.shape)) as typeof config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${options.name}: ${error.message}\n`);
    process.exit(2);
  }
  const main = async (): Promise<void> => {
    const infrastructure = await createInfrastructure(config, logger, options.name);
    let handle: ServiceHandle;
    try {
      handle = await options.start(infrastructure, config);
    } catch (error) {
      await infrastructure.close();
      throw error;
    }
    logger.info({ address: handle.address }, `${options.name} started`);
    onShutdownSignal(() =>
      drain([handle], {
        timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
        logger,
        finally: () => infrastructure.close(),
      }),
    );
  };
  main().catch((error: unknown) => {
    logger.fatal({ err: error }, `${options.name} failed to start`);
    process.exit(1);
  });
};
