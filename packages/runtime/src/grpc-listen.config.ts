import { z } from 'zod';
import { envPort } from '@marketplace/platform';

/** GRPC_HOST and GRPC_PORT of a service's cluster-mode main; every pod binds all interfaces by default. */
export const grpcListenConfigSchema = (defaultPort: number) =>
  z.object({
    GRPC_HOST: z.string().default('0.0.0.0'),
    GRPC_PORT: envPort(defaultPort),
  });
