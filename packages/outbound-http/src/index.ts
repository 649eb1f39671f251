export { createAddressPolicy, parseAllowList, type AddressPolicy } from './address-policy.js';
export {
  createGuardedFetcher,
  OUTBOUND_LIMITS,
  type FetchedResource,
  type GuardedFetcher,
  type GuardedFetcherOptions,
  type PostedResponse,
} from './guarded-fetcher.js';
export { OutboundFetchError, type OutboundFetchFailure } from './outbound-fetch.error.js';
export { outboundConfigSchema, type OutboundConfig } from './outbound.config.js';
