import { z } from 'zod';
import { createMailer, mailerConfigSchema } from '@marketplace/mailer';
import { outboundConfigSchema } from '@marketplace/outbound-http';
import { DEFAULT_GRPC_PORTS } from '@marketplace/platform';
import { grpcListenConfigSchema, infrastructureConfigSchema, runServiceMain } from '@marketplace/runtime';
import { loadOrCreateSigningSecret } from './adapters/signing-secret.js';
import { startSubscriptionService } from './subscription.service.js';

/** Cluster mode: one subscription service per process, infrastructure from the environment (see README). */
runServiceMain({
  name: 'subscription',
  configSchema: grpcListenConfigSchema(DEFAULT_GRPC_PORTS.subscription).extend({
    DATA_DIR: infrastructureConfigSchema.shape.DATA_DIR,
    ...outboundConfigSchema.shape,
    ...mailerConfigSchema.shape,
    /** Signs saved_search.match webhooks; absent: generated once and kept in DATA_DIR (one replica only). */
    WEBHOOK_SIGNING_SECRET: z.string().min(32, 'use at least 32 characters').optional(),
    /** `{base_url}` of product and unsubscribe links (the gateway's public URL). */
    PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  }),
  start: async (infrastructure, config) =>
    startSubscriptionService({
      ...infrastructure,
      grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT },
      mailer: createMailer(config, config.DATA_DIR),
      signingSecret: await loadOrCreateSigningSecret(config.WEBHOOK_SIGNING_SECRET, config.DATA_DIR),
      outboundAllowList: config.OUTBOUND_ALLOW_HOSTS,
      publicBaseUrl: config.PUBLIC_BASE_URL,
    }),
});
