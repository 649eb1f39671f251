export * from './search-index.port.js';
export { createEmbeddedSearchIndex } from './embedded-search-index.js';
export type { EmbeddedSearchIndexOptions } from './embedded-search-index.js';
export { createWorkerSearchIndex } from './worker-search-index.js';
export type { WorkerSearchIndex, WorkerSearchIndexOptions } from './worker-search-index.js';
export * from './vector/vector-index.port.js';
export { createHnswVectorIndex, MAX_VECTOR_CANDIDATES } from './vector/hnsw-vector-index.js';
export { embeddingTextOf } from './vector/embedding-text.js';
export {
  createElasticsearchVectorIndex,
  knnRequestOf,
  vectorIndexTemplateBody,
} from './vector/elasticsearch-vector-index.js';
export type {
  ElasticsearchVectorIndex,
  ElasticsearchVectorIndexOptions,
} from './vector/elasticsearch-vector-index.js';
export type { HnswVectorIndexOptions } from './vector/hnsw-vector-index.js';
export {
  createElasticsearchSearchIndex,
  filterClauses,
  indexTemplateBody,
  searchRequestOf,
  MAX_RESULT_WINDOW,
} from './elasticsearch-search-index.js';
export { connectElasticsearch } from './elasticsearch-connection.js';
export type { ConnectedElasticsearch } from './elasticsearch-connection.js';
export type {
  ElasticsearchSearchIndex,
  ElasticsearchSearchIndexOptions,
} from './elasticsearch-search-index.js';
export { indexTerms, queryTerms, type QueryTerm } from './lexical-analysis.js';
