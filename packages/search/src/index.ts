export * from './search-index.port.js';
export { createEmbeddedSearchIndex } from './embedded-search-index.js';
export type { EmbeddedSearchIndexOptions } from './embedded-search-index.js';
export { createWorkerSearchIndex } from './worker-search-index.js';
export type { WorkerSearchIndex, WorkerSearchIndexOptions } from './worker-search-index.js';
