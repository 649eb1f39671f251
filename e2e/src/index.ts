export * from './harness/processes.js';
export * from './harness/marketplace-client.js';
export * from './harness/cluster.js';
export { OwnDatabase } from './harness/own-database.js';
export * from './harness/embedded.js';
export * from './harness/shared-marketplace.js';
export * from './harness/mail-store.js';
