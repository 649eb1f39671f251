import { z } from 'zod';
import { createMailer, mailerConfigSchema } from '@marketplace/mailer';
import { outboundConfigSchema } from '@marketplace/outbound-http';
import { DEFAULT_GRPC_PORTS, persistentSigningKey, signingKeyFromPem } from '@marketplace/platform';
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
    /**
     * PKCS#8 PEM of the marketplace's EC P-256 signing key, the gateway's SIGNING_KEY_PEM: webhooks carry its
     * RFC 9421 signature, checked against /.well-known/ucp. Absent: DATA_DIR/secrets/signing-key.pem, generated
     * once (the gateway's only when both share DATA_DIR: set it in cluster mode).
     */
    SIGNING_KEY_PEM: z
      .string()
      .includes('PRIVATE KEY', { message: 'expected a PKCS#8 PEM private key' })
      .optional(),
    /** `{base_url}` of product and unsubscribe links (the gateway's public URL). */
    PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  }),
  start: async (infrastructure, config) =>
    startSubscriptionService({
      ...infrastructure,
      grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT },
      mailer: createMailer(config, config.DATA_DIR),
      signingSecret: await loadOrCreateSigningSecret(config.WEBHOOK_SIGNING_SECRET, config.DATA_DIR),
      signingKey:
        config.SIGNING_KEY_PEM === undefined
          ? await persistentSigningKey(config.DATA_DIR, 'signing-key.pem')
          : signingKeyFromPem(config.SIGNING_KEY_PEM),
      outboundAllowList: config.OUTBOUND_ALLOW_HOSTS,
      publicBaseUrl: config.PUBLIC_BASE_URL,
    }),
});
