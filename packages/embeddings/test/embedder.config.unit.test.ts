import { describe, expect, it } from '@jest/globals';
import { parseEnv, ConfigError } from '@marketplace/platform';
import { createEmbedder, embedderConfigSchema } from '../src/index.js';

describe('embedder configuration', () => {
  it('defaults to the local provider', () => {
    expect(parseEnv(embedderConfigSchema, {}).EMBEDDINGS_PROVIDER).toBe('local');
  });

  it('names the variable of a bad provider', () => {
    expect(() => parseEnv(embedderConfigSchema, { EMBEDDINGS_PROVIDER: 'magic' })).toThrow(ConfigError);
    expect(() => parseEnv(embedderConfigSchema, { EMBEDDINGS_PROVIDER: 'magic' })).toThrow(
      'EMBEDDINGS_PROVIDER',
    );
  });

  it('gives no embedder for none, so semantic search can answer 503', async () => {
    expect(
      await createEmbedder(parseEnv(embedderConfigSchema, { EMBEDDINGS_PROVIDER: 'none' }), '/nonexistent'),
    ).toBeUndefined();
  });

  it('requires a URL and a model for openai', async () => {
    const config = parseEnv(embedderConfigSchema, { EMBEDDINGS_PROVIDER: 'openai' });
    await expect(createEmbedder(config, '/nonexistent')).rejects.toThrow(
      'EMBEDDINGS_URL and EMBEDDINGS_MODEL',
    );
    const ok = parseEnv(embedderConfigSchema, {
      EMBEDDINGS_PROVIDER: 'openai',
      EMBEDDINGS_URL: 'http://127.0.0.1:11434',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
    });
    expect((await createEmbedder(ok, '/nonexistent'))?.space).toBe(
      'openai:http://127.0.0.1:11434:nomic-embed-text',
    );
  });
});
