export { startCatalogService } from './catalog.service.js';
export type { CatalogServiceHandle, CatalogServiceOptions } from './catalog.service.js';
// What a composition root needs to give the catalog its embedder (EMBEDDINGS_* variables), without depending on
// @marketplace/embeddings itself.
export { createEmbedder, embedderConfigSchema } from '@marketplace/embeddings';
