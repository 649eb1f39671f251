import { z } from 'zod';
import { createMailer, mailerConfigSchema } from '@marketplace/mailer';
import { DEFAULT_GRPC_PORTS, envGrpcTarget, envPort } from '@marketplace/platform';
import { infrastructureConfigSchema, runServiceMain } from '@marketplace/runtime';
import { orderSettingsSchema } from './order.config.js';
import { startOrderService } from './order.service.js';

/** Cluster mode: one order service per process, infrastructure from the environment (see README). */
runServiceMain({
  name: 'order',
  configSchema: z.object({
    GRPC_HOST: z.string().default('0.0.0.0'),
    GRPC_PORT: envPort(DEFAULT_GRPC_PORTS.order),
    DATA_DIR: infrastructureConfigSchema.shape.DATA_DIR,
    LISTING_GRPC_ADDR: envGrpcTarget(DEFAULT_GRPC_PORTS.listing),
    QUOTE_GRPC_ADDR: envGrpcTarget(DEFAULT_GRPC_PORTS.quote),
    ...orderSettingsSchema.shape,
    ...mailerConfigSchema.shape,
  }),
  start: ({ db, log, logger, clock, relayBatchIntervalMs }, config) =>
    startOrderService({
      db,
      log,
      logger,
      clock,
      relayBatchIntervalMs,
      grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT },
      services: { listing: config.LISTING_GRPC_ADDR, quote: config.QUOTE_GRPC_ADDR },
      settings: config,
      mailer: createMailer(config, config.DATA_DIR),
    }),
});
