import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { createFilesystemBlobStore } from '../src/filesystem.blob-store.js';
import { describeBlobStoreContract } from '../src/testing/index.js';

const directory = mkdtempSync(join(tmpdir(), 'blobstore-'));

describeBlobStoreContract('filesystem', () => createFilesystemBlobStore(directory));

describe('filesystem blob store', () => {
  it('keeps each blob as a file named by its key and leaves no temporary file behind', async () => {
    const own = mkdtempSync(join(tmpdir(), 'blobstore-'));
    await createFilesystemBlobStore(own).put('abc.png', Buffer.from('png'), 'image/png');
    expect(readdirSync(own).sort()).toEqual(['.content-types', 'abc.png']);
    expect(readdirSync(join(own, '.content-types'))).toEqual(['abc.png']);
  });

  it('survives a new instance on the same directory (a restart)', async () => {
    await createFilesystemBlobStore(directory).put('kept.webp', Buffer.from('webp'), 'image/webp');
    expect(await createFilesystemBlobStore(directory).get('kept.webp')).toEqual({
      body: Buffer.from('webp'),
      contentType: 'image/webp',
    });
  });
});
