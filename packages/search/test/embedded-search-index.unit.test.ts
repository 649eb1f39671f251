import { createEmbeddedSearchIndex } from '../src/index.js';
import type { ContractPayload } from '../src/testing/index.js';
import { searchIndexContract } from '../src/testing/index.js';

searchIndexContract('embedded (MiniSearch)', {
  create: async () => createEmbeddedSearchIndex<ContractPayload>({ sliceMs: 0 }),
});
