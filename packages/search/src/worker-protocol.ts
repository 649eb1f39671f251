import type { SearchDocument, SearchQuery } from './search-index.port.js';

/** A call from `createWorkerSearchIndex` to its worker thread: one SearchIndex method and its arguments. */
export type WorkerRequest = { readonly callId: number } & (
  | { readonly method: 'upsert'; readonly document: SearchDocument }
  | { readonly method: 'upsertMany'; readonly documents: readonly SearchDocument[] }
  | { readonly method: 'remove'; readonly id: string; readonly version: number }
  | { readonly method: 'search'; readonly query: SearchQuery }
  | { readonly method: 'count' }
  | { readonly method: 'clear' }
);

/** The answer to one call: its result, or the error it threw (name and message survive the thread boundary). */
export type WorkerReply =
  | { readonly callId: number; readonly result: unknown; readonly error?: undefined }
  | { readonly callId: number; readonly error: { readonly name: string; readonly message: string } };
