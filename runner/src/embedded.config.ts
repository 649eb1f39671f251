import { z } from 'zod';
import { envPort } from '@marketplace/platform';
import { blobStoreConfigSchema } from '@marketplace/blobstore';
import { mailerConfigSchema } from '@marketplace/mailer';
import { outboundConfigSchema } from '@marketplace/outbound-http';
import { infrastructureConfigSchema } from '@marketplace/runtime';

/** `pnpm start`: the whole marketplace in one process. Infrastructure defaults are the embedded adapters. */
export const embeddedConfigSchema = infrastructureConfigSchema.extend({
  PORT: envPort(8080),
  HOST: z.string().default('0.0.0.0'),
  ADMIN_TOKEN: z.string().min(16, 'use at least 16 characters').optional(),
  PUBLIC_BASE_URL: z.url().optional(),
  ...blobStoreConfigSchema.shape,
  ...outboundConfigSchema.shape,
  ...mailerConfigSchema.shape,
});

export type EmbeddedConfig = z.infer<typeof embeddedConfigSchema>;
