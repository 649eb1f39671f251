export * from './embedder.port.js';
export {
  loadLocalEmbedder,
  createLocalEmbedder,
  LOCAL_COMMON_DIRECTIONS,
  LOCAL_TABLE_FILE,
  LOCAL_VOCABULARY_SIZE,
} from './local-embedder.js';
export type { LocalEmbedderOptions } from './local-embedder.js';
export { createOpenAiEmbedder, EmbeddingProviderError } from './openai-embedder.js';
export type { OpenAiEmbedderOptions } from './openai-embedder.js';
export { createEmbedder, embedderConfigSchema } from './embedder.config.js';
export type { EmbedderConfig } from './embedder.config.js';
export {
  convertWinkEmbeddings,
  readWordVectorTable,
  removeCommonDirections,
  writeWordVectorTable,
} from './word-vector-table.js';
export type { WordVectorTable } from './word-vector-table.js';
