import { idempotencyConflict, requestHashOf } from '@marketplace/eventsourcing';
import type { BulkUpsertMode } from '@marketplace/vocabulary';
import type { ImportFormat } from './import-file.js';
import type { ImportKey, UploadedImport } from './import.ports.js';

/**
 * An upload's key bound to what decides its import (docs/imports.md, docs/idempotency.md): the seller, the
 * options and the file's SHA-256, so the file is digested once and never stored twice. The digest runs off the
 * event loop (a 20 MiB file would hold it for tens of milliseconds).
 */
export const importKeyOf = async (
  key: string,
  upload: {
    readonly sellerAccountId: number;
    readonly mode: BulkUpsertMode;
    readonly format: ImportFormat;
    readonly file: Uint8Array;
  },
): Promise<ImportKey> => {
  // An upload's bytes are an ordinary buffer, never a shared one.
  const bytes = upload.file as Uint8Array<ArrayBuffer>;
  const file = Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex');
  const { sellerAccountId, mode, format } = upload;
  return { key, requestHash: requestHashOf('import_listings', { sellerAccountId, mode, format, file }) };
};

/**
 * The import a key holds, answered again when it was uploaded with the same file and options; another file or
 * other options under the key are the 422 idempotency conflict.
 */
export const replayOf = (held: UploadedImport, request: ImportKey): UploadedImport => {
  if (held.requestHash !== request.requestHash) throw idempotencyConflict(request.key);
  return held;
};
