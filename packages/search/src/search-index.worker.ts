/**
 * The worker-thread entry of `createWorkerSearchIndex`: holds an embedded index and answers the
 * main thread's calls one at a time, so a slow query costs this thread's time, never the service's event loop.
 * Runs from the compiled file (`dist/src/search-index.worker.js`) in every setting, tests included.
 */
import { parentPort } from 'node:worker_threads';
import { createEmbeddedSearchIndex } from './embedded-search-index.js';
import type { WorkerReply, WorkerRequest } from './worker-protocol.js';

if (!parentPort) throw new Error('search-index.worker must run in a worker thread');
const port = parentPort;
// The loop here serves only this index, so it need not yield between documents of a load.
const index = createEmbeddedSearchIndex({ sliceMs: Number.POSITIVE_INFINITY });

const perform = (request: WorkerRequest): Promise<unknown> => {
  switch (request.method) {
    case 'upsert':
      return index.upsert(request.document);
    case 'upsertMany':
      return index.upsertMany(request.documents);
    case 'remove':
      return index.remove(request.id, request.version);
    case 'search':
      return index.search(request.query);
    case 'count':
      return index.count();
    case 'clear':
      return index.clear();
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
