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
    await createFilesystemBlobStore(own).put('abc.png', Buffer.from('png'), 'image/gif');
    expect(readdirSync(own).sort()).toEqual(['.content-types', 'abc.png']);
    expect(readdirSync(join(own, '.content-types'))).toEqual(['abc.png']);
  });

  it("writes no content-type file for the type the key's extension names, and drops one stored before", async () => {
    const own = mkdtempSync(join(tmpdir(), 'blobstore-'));
    const store = createFilesystemBlobStore(own);
    await store.put('implied.jpg', Buffer.from('jpeg'), 'image/jpeg');
    expect(readdirSync(own).sort()).toEqual(['.content-types', 'implied.jpg']);
    expect(readdirSync(join(own, '.content-types'))).toEqual([]);
    expect(await store.get('implied.jpg')).toEqual({ body: Buffer.from('jpeg'), contentType: 'image/jpeg' });
    await store.put('retyped.png', Buffer.from('png'), 'image/gif');
    await store.put('retyped.png', Buffer.from('png'), 'image/png');
    expect(readdirSync(join(own, '.content-types'))).toEqual([]);
    expect(await store.get('retyped.png')).toEqual({ body: Buffer.from('png'), contentType: 'image/png' });
  });

  it('reads a blob stored with its content-type file, and none for a key without a known extension', async () => {
    const own = mkdtempSync(join(tmpdir(), 'blobstore-'));
    const store = createFilesystemBlobStore(own);
    await store.put('stored.webp', Buffer.from('webp'), 'image/avif');
    expect(await store.get('stored.webp')).toEqual({ body: Buffer.from('webp'), contentType: 'image/avif' });
    await store.put('plain.bin', Buffer.from('bin'), 'application/octet-stream');
    expect(await store.get('plain.bin')).toEqual({
      body: Buffer.from('bin'),
      contentType: 'application/octet-stream',
    });
    expect(await store.get('missing.png')).toBeUndefined();
  });

  it('survives a new instance on the same directory (a restart)', async () => {
    await createFilesystemBlobStore(directory).put('kept.webp', Buffer.from('webp'), 'image/webp');
    expect(await createFilesystemBlobStore(directory).get('kept.webp')).toEqual({
      body: Buffer.from('webp'),
      contentType: 'image/webp',
    });
  });
});
