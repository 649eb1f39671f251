import { z } from 'zod';
import { createMailer, mailerConfigSchema } from '@marketplace/mailer';
import { DEFAULT_GRPC_PORTS, envPort } from '@marketplace/platform';
import { infrastructureConfigSchema, runServiceMain } from '@marketplace/runtime';
import { startQuoteService } from './quote.service.js';

/** Cluster mode: one quote service per process, infrastructure from the environment (see README). */
runServiceMain({
  name: 'quote',
  configSchema: z.object({
    GRPC_HOST: z.string().default('0.0.0.0'),
    GRPC_PORT: envPort(DEFAULT_GRPC_PORTS.quote),
    DATA_DIR: infrastructureConfigSchema.shape.DATA_DIR,
    ...mailerConfigSchema.shape,
    /** Its host names the Message-IDs of the quote emails (the gateway's public URL). */
    PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  }),
  start: ({ db, log, logger, clock, relayBatchIntervalMs }, config) =>
    startQuoteService({
      db,
      log,
      logger,
      clock,
      relayBatchIntervalMs,
      grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT },
      mailer: createMailer(config, config.DATA_DIR),
      publicBaseUrl: config.PUBLIC_BASE_URL,
    }),
});
