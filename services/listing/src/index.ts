export { startListingService, type ListingServiceOptions } from './listing.service.js';
export { imageFetchConfigSchema, imageFetchOptionsOf } from './image-fetch.config.js';
