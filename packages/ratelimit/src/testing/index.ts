export { rateLimitStoreContract } from './rate-limit-store.contract.js';
