import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { BlobStore } from './blob-store.port.js';
import { assertBlobKey } from './blob-store.port.js';

/** Content types live beside the blobs, in a directory no key can name (keys never start with a dot). */
const CONTENT_TYPES_DIR = '.content-types';

const isMissing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Blobs as files under `directory` (embedded mode: `DATA_DIR/images`). A put writes a temporary file and renames
 * it into place, content type first, so a reader never sees half a blob or a blob without its type, and
 * replicas writing the same key concurrently each rename a complete copy.
 */
export const createFilesystemBlobStore = (directory: string): BlobStore => {
  const typesDirectory = join(directory, CONTENT_TYPES_DIR);
  let prepared: Promise<unknown> | undefined;
  const writeAtomically = async (path: string, data: Uint8Array | string): Promise<void> => {
    const temporary = `${path}.${randomUUID()}.tmp`;
    await writeFile(temporary, data);
    await rename(temporary, path);
  };

  return {
    put: async (key, body, contentType) => {
      assertBlobKey(key);
      await (prepared ??= mkdir(typesDirectory, { recursive: true }));
      await writeAtomically(join(typesDirectory, key), contentType);
      await writeAtomically(join(directory, key), body);
    },
    get: async (key) => {
      assertBlobKey(key);
      try {
        const [body, contentType] = await Promise.all([
          readFile(join(directory, key)),
          readFile(join(typesDirectory, key), 'utf8'),
        ]);
        return { body, contentType };
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
  };
};
