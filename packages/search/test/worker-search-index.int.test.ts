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

  it('answers a search between the slices of a load, without waiting for the whole batch', async () => {
    // One message of 20,000 documents: well over a second of indexing on this machine.
    const index = createWorkerSearchIndex<ContractPayload>({ batchSize: 20_000 });
    try {
      await index.upsert(contractDocument(0, { title: 'early pallet' }));
      const order: string[] = [];
      const loaded = index
        .upsertMany(
          Array.from({ length: 20_000 }, (_, n) =>
            contractDocument(n + 1, { title: `loaded pallet lot ${n}` }),
          ),
        )
        .then(() => order.push('load'));
      const searched = index
        .search({ text: 'early', filters: { visibility: 'any' }, limit: 10, offset: 0 })
        .then(({ total }) => order.push(`search ${total}`));

      await Promise.all([loaded, searched]);

      expect(order).toEqual(['search 1', 'load']);
      await expect(index.count()).resolves.toBe(20_001);
    } finally {
      await index.close();
    }
  });

  it('applies writes in the order they were sent, a load still in slices included', async () => {
    const index = createWorkerSearchIndex<ContractPayload>({ batchSize: 20_000 });
    try {
      const loaded = index.upsertMany(Array.from({ length: 20_000 }, (_, n) => contractDocument(n)));
      const cleared = index.clear();
      const removed = index.remove(contractDocument(1).id, 2);
      const last = index.upsert(contractDocument(2, { title: 'after the clear' }));

      await Promise.all([loaded, cleared, removed, last]);

      await expect(index.count()).resolves.toBe(1);
      const { hits } = await index.search({
        text: 'after',
        filters: { visibility: 'any' },
        limit: 10,
        offset: 0,
      });
      expect(hits.map(({ id }) => id)).toEqual([contractDocument(2).id]);
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
