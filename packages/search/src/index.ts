export * from './search-index.port.js';
export { createEmbeddedSearchIndex } from './embedded-search-index.js';
export type { EmbeddedSearchIndexOptions } from './embedded-search-index.js';
