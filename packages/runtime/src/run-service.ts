import { z } from 'zod';
import type { ServiceHandle } from '@marketplace/platform';
import { ConfigError, createLogger, parseEnv } from '@marketplace/platform';
import { configureInternalAuth, MIN_INTERNAL_KEY_BYTES } from '@marketplace/rpc';
import type { Infrastructure } from './infrastructure.js';
import { createInfrastructure } from './infrastructure.js';
import { infrastructureConfigSchema } from './infrastructure.config.js';
import { startTelemetry } from '@marketplace/telemetry';
import { drain, onShutdownSignal } from './lifecycle.js';

/** The variables of a service's main beyond its infrastructure and its own. */
export const serviceMainConfigSchema = z.object({
  /**
   * true: start the service (which applies its migrations), drain at once and exit 0; the chart's migrations Job
   * runs this before a new version's pods start.
   */
  MIGRATE_ONLY: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /**
   * Signs and verifies the service-to-service tokens (docs/security.md, "Internal calls"): the same value in
   * every service of a deployment, from the chart's Secret.
   */
  INTERNAL_AUTH_KEY: z
    .string()
    .refine((value) => Buffer.byteLength(value) >= MIN_INTERNAL_KEY_BYTES, {
      message: `use at least ${MIN_INTERNAL_KEY_BYTES} bytes`,
    })
    .transform((value) => Buffer.from(value, 'utf8')),
});

export interface ServiceMainOptions<S extends z.ZodObject> {
  readonly name: string;
  /** The service's own variables; merged with the infrastructure variables and parsed once. */
  readonly configSchema: S;
  readonly start: (infrastructure: Infrastructure, config: z.infer<S>) => Promise<ServiceHandle>;
}

/**
 * The cluster-mode main of one service: parse the environment, open the infrastructure (waiting for it), start,
 * and drain on SIGTERM. A configuration error exits with status 2 and names the variable. With MIGRATE_ONLY=true
 * it stops right after starting, since every service applies its migrations as it starts.
 */
export const runServiceMain = <S extends z.ZodObject>(options: ServiceMainOptions<S>): void => {
  const logger = createLogger({ service: options.name });
  let config: z.infer<typeof infrastructureConfigSchema> &
    z.infer<typeof serviceMainConfigSchema> &
    z.infer<S>;
  try {
    config = parseEnv(
      infrastructureConfigSchema.extend(serviceMainConfigSchema.shape).extend(options.configSchema.shape),
    ) as typeof config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${options.name}: ${error.message}\n`);
    process.exit(2);
  }
  configureInternalAuth({ key: config.INTERNAL_AUTH_KEY, caller: options.name });
  // Before anything opens a connection, so the first calls and messages are traced too.
  const telemetry = startTelemetry({ serviceName: options.name });
  const main = async (): Promise<void> => {
    const infrastructure = await createInfrastructure(config, logger, options.name);
    let handle: ServiceHandle;
    try {
      handle = await options.start(infrastructure, config);
    } catch (error) {
      await infrastructure.close();
      throw error;
    }
    const stop = (): Promise<boolean> =>
      drain([handle], {
        timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
        logger,
        // Pools first, then the exporters flush the spans of the drain itself.
        finally: async () => {
          await infrastructure.close();
          await telemetry.shutdown();
        },
      });
    if (config.MIGRATE_ONLY) {
      logger.info(`${options.name} migrations applied (MIGRATE_ONLY); stopping`);
      process.exit((await stop()) ? 0 : 1);
    }
    logger.info({ address: handle.address }, `${options.name} started`);
    onShutdownSignal(stop);
  };
  main().catch((error: unknown) => {
    logger.fatal({ err: error }, `${options.name} failed to start`);
    process.exit(1);
  });
};
