import { describe, expect, it } from '@jest/globals';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createWorkerSearchIndex } from '../src/index.js';
import type { WorkerSearchIndex } from '../src/index.js';
import type { ContractPayload } from '../src/testing/index.js';
import { contractDocument, searchIndexContract } from '../src/testing/index.js';

// The real worker thread, from the compiled entry (dist/src/search-index.worker.js: `tsc -b` comes first, as in
// `pnpm test`): jest's in-memory transform cannot load a worker from the TypeScript sources.
searchIndexContract('embedded in a worker thread', {
  create: async () => createWorkerSearchIndex<ContractPayload>({ batchSize: 2 }),
  destroy: (index) => (index as WorkerSearchIndex<ContractPayload>).close(),
});

describe('createWorkerSearchIndex', () => {
  it('computes searches off the event loop: the loop turns while a query of common words runs', async () => {
    const index = createWorkerSearchIndex<ContractPayload>();
    try {
      const documents = Array.from({ length: 5_000 }, (_, n) =>
        contractDocument(n, { title: `common words pallet lot ${n}`, description: 'common words again' }),
      );
      await index.upsertMany(documents);
      const order: string[] = [];

      const searched = index
        .search({ text: 'common words pallet lot', filters: { visibility: 'any' }, limit: 10, offset: 0 })
        .then(({ total }) => order.push(`search ${total}`));
      await nextTurn().then(() => order.push('event loop turned'));
      await searched;

      expect(order).toEqual(['event loop turned', 'search 5000']);
    } finally {
      await index.close();
    }
  });

  it('rejects every call once closed, instead of waiting for a thread that is gone', async () => {
    const index = createWorkerSearchIndex<ContractPayload>();
    await index.upsert(contractDocument(1));
    expect(index.isAlive()).toBe(true);
    const pending = expect(index.count()).rejects.toThrow('search index closed');

    await index.close();

    await pending;
    expect(index.isAlive()).toBe(false);
    await expect(index.count()).rejects.toThrow('search index closed');
  });
});
