import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { BlobStore } from './blob-store.port.js';
import { assertBlobKey } from './blob-store.port.js';

/** Content types live beside the blobs, in a directory no key can name (keys never start with a dot). */
const CONTENT_TYPES_DIR = '.content-types';

const isMissing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** The content type a key's extension names; a blob of that type needs no file of its own for it. */
const TYPE_OF_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

const impliedTypeOf = (key: string): string | undefined => {
  const dot = key.lastIndexOf('.');
  return dot < 0 ? undefined : TYPE_OF_EXTENSION[key.slice(dot + 1).toLowerCase()];
};

const readIfPresent = async (path: string, encoding?: 'utf8'): Promise<Buffer | string | undefined> => {
  try {
    return await readFile(path, encoding);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
};

/**
 * Blobs as files under `directory` (embedded mode: `DATA_DIR/images`). A put writes a temporary file and renames
 * it into place, content type first, so a reader never sees half a blob or a blob without its type, and
 * replicas writing the same key concurrently each rename a complete copy. A content type the key's extension
 * names is not written (a new file costs an inode allocation): the key says it.
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
      // A type the key implies drops a type an earlier put of the key stored, which would win on reading.
      if (impliedTypeOf(key) === contentType) await rm(join(typesDirectory, key), { force: true });
      else await writeAtomically(join(typesDirectory, key), contentType);
      await writeAtomically(join(directory, key), body);
    },
    get: async (key) => {
      assertBlobKey(key);
      const [body, stored] = await Promise.all([
        readIfPresent(join(directory, key)),
        readIfPresent(join(typesDirectory, key), 'utf8'),
      ]);
      const contentType = stored?.toString() ?? impliedTypeOf(key);
      if (!Buffer.isBuffer(body) || contentType === undefined) return undefined;
      return { body, contentType };
    },
  };
};
