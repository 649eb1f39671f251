export * from './search-index.contract.js';
export * from './vector-index.contract.js';
