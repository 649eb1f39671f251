// The e2e project's global set-up: the embedded marketplace that files of the default configuration share
// (src/harness/shared-marketplace.ts). Plain JavaScript on the compiled harness: jest imports this file natively,
// and the end-to-end tests run the compiled marketplace anyway (`tsc -b` comes first).
import { startSharedMarketplace } from './dist/src/harness/shared-marketplace.js';

export default async function startShared() {
  globalThis.sharedE2eMarketplace = await startSharedMarketplace();
}
