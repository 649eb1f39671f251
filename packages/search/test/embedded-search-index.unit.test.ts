import { createEmbeddedSearchIndex } from '../src/index.js';
import type { ContractPayload } from '../src/testing/index.js';
import { searchIndexContract } from '../src/testing/index.js';

searchIndexContract('embedded', {
  create: async () => createEmbeddedSearchIndex<ContractPayload>({ sliceMs: 0 }),
});
