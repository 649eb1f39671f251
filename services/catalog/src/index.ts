export { startCatalogService } from './catalog.service.js';
export type { CatalogServiceHandle, CatalogServiceOptions } from './catalog.service.js';
