/**
 * The worker-thread entry of `createWorkerSearchIndex`: holds an embedded index and answers the
 * main thread's calls, so a slow query costs this thread's time, never the service's event loop.
 * Runs from the compiled file (`dist/src/search-index.worker.js`) in every setting, tests included.
 */
import { parentPort } from 'node:worker_threads';
import { createEmbeddedSearchIndex } from './embedded-search-index.js';
import type { WorkerReply, WorkerRequest } from './worker-protocol.js';

if (!parentPort) throw new Error('search-index.worker must run in a worker thread');
const port = parentPort;
/**
 * A load yields to the thread's loop this often, so a search that arrives meanwhile waits for one slice of
 * indexing, not for the whole batch (a batch of 250 listings takes 5-25 ms; see the package README, "The worker
 * thread").
 */
const LOAD_SLICE_MS = 1;
const index = createEmbeddedSearchIndex({ sliceMs: LOAD_SLICE_MS });

/** Writes apply one after the other, in the order they came; reads answer at once, between a load's slices. */
let writesDone: Promise<unknown> = Promise.resolve();
const afterEarlierWrites = <T>(write: () => Promise<T>): Promise<T> => {
  const done = writesDone.then(write);
  writesDone = done.catch(() => undefined);
  return done;
};

const perform = (request: WorkerRequest): Promise<unknown> => {
  switch (request.method) {
    case 'upsert':
      return afterEarlierWrites(() => index.upsert(request.document));
    case 'upsertMany':
      return afterEarlierWrites(() => index.upsertMany(request.documents));
    case 'remove':
      return afterEarlierWrites(() => index.remove(request.id, request.version));
    case 'clear':
      return afterEarlierWrites(() => index.clear());
    case 'search':
      return index.search(request.query);
    case 'count':
      return index.count();
  }
};

port.on('message', (request: WorkerRequest) => {
  perform(request).then(
    (result) => port.postMessage({ callId: request.callId, result } satisfies WorkerReply),
    (error: unknown) => {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      port.postMessage({ callId: request.callId, error: { name, message } } satisfies WorkerReply);
    },
  );
});
