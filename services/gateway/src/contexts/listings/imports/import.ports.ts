import type { BulkUpsertMode } from '@marketplace/vocabulary';
import type { BulkUpsertAnswer } from '../bulk-upsert.js';
import type { ImportFormat, RowError } from './import-file.js';

export const IMPORT_STATUSES = ['queued', 'running', 'done', 'failed'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/** A row of an import, as it is stored before it is applied: its body, or the errors that refused it. */
export type StoredImportRow =
  | { readonly row: number; readonly body: Record<string, unknown> }
  | { readonly row: number; readonly errors: readonly RowError[] };

/** What a row came to: the bulk engine's status with its listing, or its errors. */
export interface ImportRowResult {
  readonly row: number;
  readonly status: 'created' | 'updated' | 'unchanged' | 'error';
  readonly productId?: string | undefined;
  readonly errors: readonly RowError[];
}

export interface ImportView {
  readonly id: string;
  readonly mode: BulkUpsertMode;
  readonly format: ImportFormat;
  readonly status: ImportStatus;
  readonly rowsTotal: number;
  readonly rowsProcessed: number;
  readonly failure: string | undefined;
  readonly createdAtMs: number;
  readonly finishedAtMs: number | undefined;
  /** Every row applied or refused so far, in file order. */
  readonly results: readonly ImportRowResult[];
}

/** An import a worker holds the lease of. */
export interface ClaimedImport {
  readonly id: string;
  readonly sellerAccountId: number;
  readonly mode: BulkUpsertMode;
}

export interface ImportChunk {
  readonly chunk: number;
  readonly rows: readonly { readonly row: number; readonly body: Record<string, unknown> }[];
}

/** An upload's Idempotency-Key and the digest of what it was sent with (its file and options). */
export interface ImportKey {
  readonly key: string;
  readonly requestHash: string;
}

/** An import as its upload answered it: the one a key holds is answered again to the same key. */
export interface UploadedImport {
  readonly id: string;
  readonly rowsTotal: number;
  /** The digest its upload's key was recorded with; undefined for an upload without a key. */
  readonly requestHash: string | undefined;
}

/** The imports and their rows (adapters/listing-imports.table.ts; docs/imports.md). */
export interface ListingImportStore {
  /**
   * Records a queued import and all its rows in one transaction, and answers it; with a key the seller's
   * import stored before under that key (by the same upload or one racing it) is answered instead, and nothing
   * is stored.
   */
  create(input: {
    readonly id: string;
    readonly sellerAccountId: number;
    readonly mode: BulkUpsertMode;
    readonly format: ImportFormat;
    readonly rows: readonly StoredImportRow[];
    readonly idempotency?: ImportKey | undefined;
  }): Promise<UploadedImport>;
  /** The seller's import stored under `key` within the keys' retention, if any. */
  findByKey(sellerAccountId: number, key: string): Promise<UploadedImport | undefined>;
  /** Forgets the keys of imports uploaded more than 24 hours ago (docs/idempotency.md); answers how many. */
  purgeExpiredKeys(): Promise<number>;
  /** The seller's import, or undefined when there is none with the id or it is another seller's. */
  find(sellerAccountId: number, id: string): Promise<ImportView | undefined>;
  /**
   * Takes the lease of the import that has waited longest for a turn (since its upload, or since its last turn
   * ended) among those queued, handed back, or running with a lease that ran out (a crashed worker).
   */
  claim(leaseMs: number): Promise<ClaimedImport | undefined>;
  /**
   * The import's next chunk: the first one planned and not applied yet (a resumed import sends it again as it
   * was), else the next `rows` rows not applied yet, planned now as a chunk numbered by its first row;
   * undefined when every row is done.
   */
  nextChunk(id: string, rows: number): Promise<ImportChunk | undefined>;
  /** Records a chunk's results and renews the lease, in one transaction. */
  recordChunk(id: string, results: readonly ImportRowResult[], leaseMs: number): Promise<void>;
  /** Ends the import: done, or failed with the reason. */
  finish(id: string, failure?: string): Promise<void>;
  /** Hands the import back after its turn: any worker may claim it, after every import waiting longer. */
  endTurn(id: string): Promise<void>;
  /** Lets another attempt take the import after `delayMs`; counts the attempt; answers how many were made. */
  release(id: string, delayMs: number): Promise<number>;
}

/** Applies one chunk through the bulk engine (docs/specification.md, "Bulk upsert"). */
export type ApplyChunk = (input: {
  readonly sellerAccountId: number;
  readonly mode: BulkUpsertMode;
  readonly items: readonly unknown[];
  readonly idempotencyKey: string;
  readonly correlationId: string;
}) => Promise<BulkUpsertAnswer>;

/** The last listing a chunk wrote (created or updated), at the version the bulk engine answered. */
export interface WrittenListing {
  readonly sellerAccountId: number;
  readonly productId: string;
  readonly version: number;
}

/**
 * Waits at most `timeoutMs` for the catalog's projection to apply `listing` at its version or a later one: true
 * once it has, false when the time passed first. A catalog that cannot be asked is an error (the import only
 * paces on the answer, so the caller waits a little and asks again).
 */
export type CatalogApplies = (listing: WrittenListing, timeoutMs: number) => Promise<boolean>;

/** The foreground requests' latencies the gateway recorded (edge/http/request-timings.ts), `performance.now()` times. */
export interface ForegroundLatencies {
  /** Of the requests that overlapped [fromMs, toMs]. */
  overlapping(fromMs: number, toMs: number): number[];
  /** Of the requests that started and finished within [fromMs, toMs]. */
  within(fromMs: number, toMs: number): number[];
}
