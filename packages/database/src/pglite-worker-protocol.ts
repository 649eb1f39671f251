/**
 * The messages between `createEmbeddedDatabase` (the caller's thread) and its PGlite worker thread
 * (`pglite.worker.ts`). Parameters cross already converted (`toDriverParams`); results cross as PGlite parsed
 * them (`UNIFORM_PARSERS`), by structured clone, which keeps Dates, Uint8Arrays and parsed JSON.
 */
export interface PGliteWorkerData {
  /** The data directory, absolute and existing; in memory when absent. */
  readonly dataDir: string | undefined;
}

export type PGliteRequest = { readonly id: number } &
  /** `tx` absent: a statement of its own, queued behind any open transaction (PGlite's transaction mutex). */
  (
    | { readonly op: 'query'; readonly sql: string; readonly params: unknown[]; readonly tx?: number }
    /** Opens transaction `tx` (BEGIN, then `setIsolation` if given); answered once it is open. */
    | { readonly op: 'begin'; readonly tx: number; readonly setIsolation: string | undefined }
    | { readonly op: 'commit' | 'rollback'; readonly tx: number }
    | { readonly op: 'listen'; readonly listener: number; readonly channel: string }
    | { readonly op: 'unlisten'; readonly listener: number }
    /** Closes PGlite once running transactions and queued statements are done. */
    | { readonly op: 'close' }
  );

/** An error as it crosses the thread: its own fields (`code`, `constraint`, `detail`…) kept, so SQLSTATEs survive. */
export interface CrossedError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  readonly fields: Record<string, unknown>;
}

export type PGliteReply =
  /** `probe` is any Date: the caller checks which realm its messages' objects arrive in (`toCallersRealm`). */
  | { readonly kind: 'ready'; readonly probe: Date }
  | { readonly kind: 'failed'; readonly error: CrossedError }
  | { readonly kind: 'result'; readonly id: number; readonly result: unknown }
  | { readonly kind: 'error'; readonly id: number; readonly error: CrossedError }
  | { readonly kind: 'notification'; readonly listener: number; readonly payload: string };

/** An error's crossing form: fields that are functions or non-array objects (PGlite's query options) stay. */
export const crossingError = (error: unknown): CrossedError => {
  if (!(error instanceof Error))
    return { name: 'Error', message: String(error), stack: undefined, fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (
      typeof value !== 'function' &&
      (typeof value !== 'object' || value === null || Array.isArray(value))
    ) {
      fields[key] = value;
    }
  }
  return { name: error.name, message: error.message, stack: error.stack, fields };
};

/** The error on this side of the thread, with the fields it had on the other (SQLSTATE in `code`). */
export const crossedError = ({ name, message, stack, fields }: CrossedError): Error => {
  const error = Object.assign(new Error(message), fields);
  error.name = name;
  error.stack = stack;
  return error;
};

/**
 * `value` rebuilt from this realm's Date, Uint8Array, Array and Object. Jest runs a test in a V8 context of its
 * own while a worker's messages arrive in the main context's objects, so `instanceof Date` would fail on a row
 * read back (in `toDriverParam`, in callers); the adapter calls this only when its probe shows that happens.
 */
export const toCallersRealm = (value: unknown): unknown => {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(toCallersRealm);
  if (ArrayBuffer.isView(value))
    return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
  if (Object.prototype.toString.call(value) === '[object Date]') return new Date((value as Date).getTime());
  return Object.fromEntries(Object.entries(value).map(([key, nested]) => [key, toCallersRealm(nested)]));
};
