export { describeBlobStoreContract } from './blob-store.contract.js';
