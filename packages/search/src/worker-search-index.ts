import { Worker } from 'node:worker_threads';
import type {
  SearchDocument,
  SearchIndex,
  SearchQuery,
  SearchResult,
  WriteOutcome,
} from './search-index.port.js';
import type { WorkerReply, WorkerRequest } from './worker-protocol.js';

/** Distributive Omit, so each request variant keeps its own fields. */
type Call = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, 'callId'> : never) : never;

export interface WorkerSearchIndexOptions {
  /**
   * The compiled worker entry. Default: `search-index.worker.js` next to this module once compiled; when this
   * module runs from its TypeScript source (jest), the compiled one under `dist/src/`, because a worker thread
   * loads plain JavaScript (build first: `tsc -b`).
   */
  readonly workerEntry?: URL;
  /** Documents per message of `upsertMany`: bounds each structured clone, so loads stream. */
  readonly batchSize?: number;
}

/** A SearchIndex that lives in a worker thread; `close` ends the thread. */
export interface WorkerSearchIndex<P> extends SearchIndex<P> {
  /** False once the thread died or was closed: every call fails from then on (readiness should say so). */
  isAlive(): boolean;
  close(): Promise<void>;
}

const defaultWorkerEntry = (): URL =>
  import.meta.url.endsWith('.ts')
    ? new URL('../dist/src/search-index.worker.js', import.meta.url)
    : new URL('./search-index.worker.js', import.meta.url);

/**
 * The embedded index in a worker thread. Same behaviour as `createEmbeddedSearchIndex` (it runs the same
 * contract suite), but loads (seconds for 100k listings) and the slowest queries (tens of milliseconds at 100k
 * for the most common words or a deep page) occupy the worker instead of the service's event loop: gRPC calls,
 * health checks and event handling keep flowing meanwhile. Writes apply in the order they were made, one at a time;
 * a search or a count answers at once, between the slices of a load in progress, so it never waits for a whole
 * batch (`search-index.worker.ts`).
 *
 * If the thread dies (out of memory, a bug), every pending and later call rejects: the index held there is
 * gone, so the owner must restart (the catalog then reloads it from its table).
 */
export const createWorkerSearchIndex = <P = unknown>(
  options: WorkerSearchIndexOptions = {},
): WorkerSearchIndex<P> => new WorkerThreadSearchIndex<P>(options);

class WorkerThreadSearchIndex<P> implements WorkerSearchIndex<P> {
  private readonly worker: Worker;
  private readonly pending = new Map<
    number,
    { readonly resolve: (value: unknown) => void; readonly reject: (error: Error) => void }
  >();
  private readonly batchSize: number;
  private nextCallId = 0;
  private failure: Error | undefined;

  constructor(options: WorkerSearchIndexOptions) {
    this.batchSize = options.batchSize ?? 1_000;
    this.worker = new Worker(options.workerEntry ?? defaultWorkerEntry());
    // The owner's servers keep the process alive; an idle index thread must not.
    this.worker.unref();
    this.worker.on('message', (reply: WorkerReply) => this.settle(reply));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`search index worker exited with code ${code}`)));
  }

  upsert(document: SearchDocument<P>): Promise<WriteOutcome> {
    return this.call({ method: 'upsert', document });
  }

  async upsertMany(documents: readonly SearchDocument<P>[]): Promise<WriteOutcome[]> {
    const outcomes: WriteOutcome[] = [];
    for (let start = 0; start < documents.length; start += this.batchSize) {
      const batch = documents.slice(start, start + this.batchSize);
      outcomes.push(...(await this.call<WriteOutcome[]>({ method: 'upsertMany', documents: batch })));
    }
    return outcomes;
  }

  remove(id: string, version: number): Promise<WriteOutcome> {
    return this.call({ method: 'remove', id, version });
  }

  search(query: SearchQuery): Promise<SearchResult<P>> {
    return this.call({ method: 'search', query });
  }

  count(): Promise<number> {
    return this.call({ method: 'count' });
  }

  clear(): Promise<void> {
    return this.call({ method: 'clear' });
  }

  isAlive(): boolean {
    return this.failure === undefined;
  }

  async close(): Promise<void> {
    this.fail(new Error('search index closed'));
    await this.worker.terminate();
  }

  private call<R>(call: Call): Promise<R> {
    if (this.failure) return Promise.reject(this.failure);
    const callId = this.nextCallId++;
    return new Promise<R>((resolve, reject) => {
      // The worker answers each method with that method's result type (worker-protocol.ts).
      this.pending.set(callId, { resolve: (value) => resolve(value as R), reject });
      const request: WorkerRequest = { ...call, callId };
      this.worker.postMessage(request);
    });
  }

  private settle(reply: WorkerReply): void {
    const caller = this.pending.get(reply.callId);
    if (!caller) return;
    this.pending.delete(reply.callId);
    if (reply.error === undefined) caller.resolve(reply.result);
    else caller.reject(errorOf(reply.error));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const caller of this.pending.values()) caller.reject(this.failure);
    this.pending.clear();
  }
}

/** Rebuilds a thrown error on this side: a RangeError (bad input) stays one, so callers can tell it apart. */
const errorOf = ({ name, message }: { name: string; message: string }): Error =>
  name === 'RangeError' ? new RangeError(message) : new Error(`search index worker: ${message}`);
