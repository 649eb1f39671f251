export * from './search-index.contract.js';
