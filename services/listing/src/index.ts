export { startListingService, type ListingServiceOptions } from './listing.service.js';
