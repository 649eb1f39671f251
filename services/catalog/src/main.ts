import { z } from 'zod';
import { createEmbedder, embedderConfigSchema } from '@marketplace/embeddings';
import { DEFAULT_GRPC_PORTS, envPort, envUrl } from '@marketplace/platform';
import { infrastructureConfigSchema, runServiceMain } from '@marketplace/runtime';
import { startCatalogService } from './catalog.service.js';

/** Cluster mode: one catalog service per process, infrastructure from the environment (see README). */
runServiceMain({
  name: 'catalog',
  configSchema: z.object({
    GRPC_HOST: z.string().default('0.0.0.0'),
    GRPC_PORT: envPort(DEFAULT_GRPC_PORTS.catalog),
    SEARCH_BACKEND: z.enum(['embedded', 'elasticsearch']).default('embedded'),
    ELASTICSEARCH_URL: envUrl().optional(),
    ELASTICSEARCH_INDEX: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,200}$/, 'must be a lower-case Elasticsearch index name')
      .default('catalog-products'),
    DATA_DIR: infrastructureConfigSchema.shape.DATA_DIR,
    ...embedderConfigSchema.shape,
  }),
  start: async (infrastructure, config) => {
    const embedder = await createEmbedder(config, config.DATA_DIR);
    if (config.SEARCH_BACKEND === 'embedded') {
      return startCatalogService({
        ...infrastructure,
        grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT },
        embedder,
      });
    }
    if (config.ELASTICSEARCH_URL === undefined) {
      throw new Error('ELASTICSEARCH_URL is required with SEARCH_BACKEND=elasticsearch');
    }
    return startCatalogService({
      ...infrastructure,
      grpc: { host: config.GRPC_HOST, port: config.GRPC_PORT },
      embedder,
      searchBackend: {
        kind: 'elasticsearch',
        url: config.ELASTICSEARCH_URL,
        alias: config.ELASTICSEARCH_INDEX,
      },
    });
  },
});
