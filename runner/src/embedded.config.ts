import { z } from 'zod';
import { envPort } from '@marketplace/platform';
import { blobStoreConfigSchema } from '@marketplace/blobstore';
import { embedderConfigSchema } from '@marketplace/catalog';
import { imageFetchConfigSchema } from '@marketplace/listing';
import { mailerConfigSchema } from '@marketplace/mailer';
import { outboundConfigSchema } from '@marketplace/outbound-http';
import { infrastructureConfigSchema } from '@marketplace/runtime';
import { orderSettingsSchema } from '@marketplace/order';
import { importPacingConfigSchema, rateLimitConfigSchema } from '@marketplace/gateway';

/** `pnpm start`: the whole marketplace in one process. Infrastructure defaults are the embedded adapters. */
export const embeddedConfigSchema = infrastructureConfigSchema.extend({
  PORT: envPort(8080),
  HOST: z.string().default('0.0.0.0'),
  ADMIN_TOKEN: z.string().min(16, 'use at least 16 characters').optional(),
  /** Absent: generated once and kept in DATA_DIR/secrets. */
  AGENT_TOKEN_SECRET: z.string().min(32, 'use at least 32 characters').optional(),
  /** Signs saved_search.match webhooks; absent: generated once and kept in DATA_DIR/secrets. */
  WEBHOOK_SIGNING_SECRET: z.string().min(32, 'use at least 32 characters').optional(),
  /** PKCS#8 PEM of the EC P-256 signing key (docs/agents.md, "Signing key"); absent: generated once in DATA_DIR/secrets. */
  SIGNING_KEY_PEM: z
    .string()
    .includes('PRIVATE KEY', { message: 'expected a PKCS#8 PEM private key' })
    .optional(),
  PUBLIC_BASE_URL: z.url().optional(),
  ...blobStoreConfigSchema.shape,
  ...outboundConfigSchema.shape,
  ...imageFetchConfigSchema.shape,
  ...mailerConfigSchema.shape,
  ...embedderConfigSchema.shape,
  ...orderSettingsSchema.shape,
  ...rateLimitConfigSchema.shape,
  ...importPacingConfigSchema.shape,
});

export type EmbeddedConfig = z.infer<typeof embeddedConfigSchema>;
