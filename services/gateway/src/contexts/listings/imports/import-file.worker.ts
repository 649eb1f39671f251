/**
 * The worker-thread entry of `readImportRows`: reads one uploaded file into rows, so parsing (seconds for a
 * 50,000-row XLSX) costs this thread's time, never the gateway's event loop. Runs from the compiled file
 * (`dist/src/contexts/listings/imports/import-file.worker.js`) in every setting, tests included.
 */
import { isAppError } from '@marketplace/platform';
import { parentPort } from 'node:worker_threads';
import type { ImportFormat } from './import-file.js';
import { importRowsOf, readImportTable } from './import-file.js';
import type { ImportFileReply } from './read-import-rows.js';

if (!parentPort) throw new Error('import-file.worker must run in a worker thread');
const port = parentPort;

/** The rows, or why the file is refused: the header's problems too (`importRowsOf` throws them). */
const readRows = async (format: ImportFormat, bytes: Uint8Array): Promise<ImportFileReply> => {
  try {
    const table = await readImportTable(
      format,
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    );
    return { rows: importRowsOf(table) };
  } catch (error) {
    return {
      refused: isAppError(error)
        ? { message: error.message, violations: [...error.violations] }
        : { message: 'unreadable import file', violations: [{ path: 'file', message: String(error) }] },
    };
  }
};

port.once('message', ({ format, bytes }: { format: ImportFormat; bytes: Uint8Array }) => {
  void readRows(format, bytes).then((reply) => port.postMessage(reply));
});
