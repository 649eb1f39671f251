import { join } from 'node:path';
import { z } from 'zod';
import type { Embedder } from './embedder.port.js';
import { loadLocalEmbedder } from './local-embedder.js';
import { createOpenAiEmbedder } from './openai-embedder.js';

/** The environment variables of the embedding provider (see the root README's configuration table). */
export const embedderConfigSchema = z.object({
  EMBEDDINGS_PROVIDER: z.enum(['local', 'openai', 'none']).default('local'),
  EMBEDDINGS_URL: z.url().optional(),
  EMBEDDINGS_MODEL: z.string().optional(),
  EMBEDDINGS_API_KEY: z.string().optional(),
  EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(1).max(120_000).default(10_000),
  /** Where `local` keeps its converted table; default `DATA_DIR/embeddings`. Test suites share one. */
  EMBEDDINGS_CACHE_DIR: z.string().min(1).optional(),
});
export type EmbedderConfig = z.infer<typeof embedderConfigSchema>;

/**
 * The configured embedder, or `undefined` for `none` (semantic search then answers 503). `openai` needs
 * EMBEDDINGS_URL and EMBEDDINGS_MODEL; `local` caches its converted vectors under EMBEDDINGS_CACHE_DIR, by
 * default `DATA_DIR/embeddings`.
 */
export const createEmbedder = async (
  config: EmbedderConfig,
  dataDir: string,
): Promise<Embedder | undefined> => {
  switch (config.EMBEDDINGS_PROVIDER) {
    case 'none':
      return undefined;
    case 'local':
      return loadLocalEmbedder({ cacheDir: config.EMBEDDINGS_CACHE_DIR ?? join(dataDir, 'embeddings') });
    case 'openai':
      if (!config.EMBEDDINGS_URL || !config.EMBEDDINGS_MODEL) {
        throw new Error('EMBEDDINGS_PROVIDER=openai needs EMBEDDINGS_URL and EMBEDDINGS_MODEL');
      }
      return createOpenAiEmbedder({
        url: config.EMBEDDINGS_URL,
        model: config.EMBEDDINGS_MODEL,
        apiKey: config.EMBEDDINGS_API_KEY,
        timeoutMs: config.EMBEDDINGS_TIMEOUT_MS,
      });
  }
};
