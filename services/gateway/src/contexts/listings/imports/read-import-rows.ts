import type { FieldViolation } from '@marketplace/platform';
import { validationError } from '@marketplace/platform';
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
 * The rows of an uploaded CSV or XLSX file (docs/imports.md), read in a worker thread of its own: csv-parse and
 * exceljs are synchronous, and a 50,000-row spreadsheet held the event loop for seconds. One thread per upload,
 * ended with it; uploads are few, and the body limit bounds each thread's memory.
 */
export const readImportRows = async (
  format: ImportFormat,
  bytes: Buffer,
  timeoutMs = READ_TIMEOUT_MS,
  heapLimitMb = READ_HEAP_LIMIT_MB,
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
