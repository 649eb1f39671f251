import type { FieldViolation } from '@marketplace/platform';
import { unavailable, validationError } from '@marketplace/platform';
import { Worker } from 'node:worker_threads';
import type { ImportFormat, ImportRow } from './import-file.js';

/** What the worker answers: the file's rows, or why the file is refused (a 400 naming `file` or a column). */
export type ImportFileReply =
  | { readonly rows: ImportRow[] }
  | { readonly refused: { readonly message: string; readonly violations: FieldViolation[] } };

/**
 * The compiled worker: next to this module once compiled; from the TypeScript source (jest), the one under
 * `dist/`, since a worker thread loads plain JavaScript (build first: `tsc -b`).
 */
const workerEntry = (): URL =>
  import.meta.url.endsWith('.ts')
    ? new URL('../../../../dist/src/contexts/listings/imports/import-file.worker.js', import.meta.url)
    : new URL('./import-file.worker.js', import.meta.url);

/** Far above what the largest accepted file takes (a 50,000-row XLSX reads in about 9 s on 2 cores). */
const READ_TIMEOUT_MS = 60_000;

/**
 * The reading thread's heap: a 50,000-row XLSX of the template that inflates to 144 MB reads in 1,024 MB (and
 * not in 256). A crafted file that needs more ends the thread, not the gateway (docs/imports.md).
 */
export const READ_HEAP_LIMIT_MB = 1_024;

const tooLargeToRead = (heapLimitMb: number): Error =>
  validationError('import file too large', [
    {
      path: 'file',
      message: `needs more than ${heapLimitMb} MB of memory to read; send fewer rows or columns`,
    },
  ]);

/**
 * Files read at once by this gateway: each reading thread may take READ_HEAP_LIMIT_MB, and six crafted uploads
 * read together took 6.7 GB. The others wait their turn, first come first served (docs/imports.md).
 */
export const MAX_CONCURRENT_READS = 2;
let reading = 0;
const waiting: (() => void)[] = [];

/** The reading threads running now (at most MAX_CONCURRENT_READS). */
export const importReadsInFlight = (): number => reading;

/**
 * Waits for a reading thread, at most `timeoutMs`: an upload that found none by then is refused as unavailable
 * (503, send it again later) rather than held without end while the others are read.
 */
const readingTurn = async (timeoutMs: number): Promise<void> => {
  if (reading < MAX_CONCURRENT_READS) {
    reading += 1;
    return;
  }
  await new Promise<void>((resolve, reject) => {
    // The ending read hands its turn over by calling `take`.
    const take = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      waiting.splice(waiting.indexOf(take), 1);
      reject(unavailable('every import file reader is busy; upload the file again in a minute'));
    }, timeoutMs);
    waiting.push(take);
  });
};

const endReading = (): void => {
  const next = waiting.shift();
  if (next === undefined) reading -= 1;
  else next();
};

/**
 * The rows of an uploaded CSV or XLSX file (docs/imports.md), read in a worker thread of its own: csv-parse and
 * exceljs are synchronous, and a 50,000-row spreadsheet held the event loop for seconds. One thread per upload,
 * ended with it, and at most MAX_CONCURRENT_READS at once; the time limit runs from the thread's start.
 */
export const readImportRows = async (
  format: ImportFormat,
  bytes: Buffer,
  timeoutMs = READ_TIMEOUT_MS,
  heapLimitMb = READ_HEAP_LIMIT_MB,
): Promise<ImportRow[]> => {
  await readingTurn(timeoutMs);
  try {
    return await readInWorker(format, bytes, timeoutMs, heapLimitMb);
  } finally {
    endReading();
  }
};

const readInWorker = async (
  format: ImportFormat,
  bytes: Buffer,
  timeoutMs: number,
  heapLimitMb: number,
): Promise<ImportRow[]> => {
  const worker = new Worker(workerEntry(), { resourceLimits: { maxOldGenerationSizeMb: heapLimitMb } });
  let timer: NodeJS.Timeout | undefined;
  try {
    const reply = new Promise<ImportFileReply>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? tooLargeToRead(heapLimitMb) : error),
      );
      worker.once('exit', (code) =>
        reject(new Error(`the import file worker exited (${code}) without an answer`)),
      );
      // A file the parsers take minutes over (a crafted spreadsheet) is refused rather than awaited for ever.
      timer = setTimeout(
        () =>
          reject(
            validationError('unreadable import file', [
              { path: 'file', message: `could not be read within ${timeoutMs / 1000} s` },
            ]),
          ),
        timeoutMs,
      );
    });
    worker.postMessage({ format, bytes });
    const answer = await reply;
    if ('refused' in answer) throw validationError(answer.refused.message, answer.refused.violations);
    return answer.rows;
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
};
