import { z } from 'zod';
import { DEFAULT_GRPC_PORTS, envGrpcTarget, envPort } from '@marketplace/platform';
import { rateLimitConfigSchema } from './http/rate-limit.config.js';
import { importPacingConfigSchema } from './import-pacing.config.js';

/** The gateway's own environment variables (cluster mode); the infrastructure ones come from @marketplace/runtime. */
export const gatewayConfigSchema = z.object({
  PORT: envPort(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  LISTING_GRPC_ADDR: envGrpcTarget(DEFAULT_GRPC_PORTS.listing),
  CATALOG_GRPC_ADDR: envGrpcTarget(DEFAULT_GRPC_PORTS.catalog),
  SUBSCRIPTION_GRPC_ADDR: envGrpcTarget(DEFAULT_GRPC_PORTS.subscription),
  ORDER_GRPC_ADDR: envGrpcTarget(DEFAULT_GRPC_PORTS.order),
  QUOTE_GRPC_ADDR: envGrpcTarget(DEFAULT_GRPC_PORTS.quote),
  ...rateLimitConfigSchema.shape,
  ...importPacingConfigSchema.shape,
  ADMIN_TOKEN: z.string().min(16, 'use at least 16 characters').optional(),
  /** Absent: generated once and kept in DATA_DIR (replicas must then share DATA_DIR or set it). */
  AGENT_TOKEN_SECRET: z.string().min(32, 'use at least 32 characters').optional(),
  /**
   * PKCS#8 PEM of the EC P-256 key that signs our messages (docs/agents.md, "Signing key"). Absent: generated
   * once and kept in DATA_DIR. Rotating it means replacing it: the published kid changes with the key.
   */
  SIGNING_KEY_PEM: z
    .string()
    .includes('PRIVATE KEY', { message: 'expected a PKCS#8 PEM private key' })
    .optional(),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  GRPC_DEADLINE_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
