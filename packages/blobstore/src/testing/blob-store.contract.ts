import { describe, expect, it } from '@jest/globals';
import type { BlobStore } from '../blob-store.port.js';

/** What every BlobStore adapter must do; run against the filesystem always and a real S3 when one is named. */
export const describeBlobStoreContract = (name: string, open: () => BlobStore): void => {
  describe(`BlobStore contract: ${name}`, () => {
    const unique = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}.png`;

    it('returns what was put, with its content type', async () => {
      const store = open();
      const key = unique();
      const body = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
      await store.put(key, body, 'image/png');
      expect(await store.get(key)).toEqual({ body, contentType: 'image/png' });
    });

    it('answers undefined for a key never put', async () => {
      expect(await open().get(unique())).toBeUndefined();
    });

    it('takes the same key again (content addressing makes it the same bytes)', async () => {
      const store = open();
      const key = unique();
      await Promise.all([
        store.put(key, Buffer.from('same'), 'image/gif'),
        store.put(key, Buffer.from('same'), 'image/gif'),
      ]);
      expect((await store.get(key))?.body.toString()).toBe('same');
    });

    it('refuses keys that could leave its namespace', async () => {
      const store = open();
      for (const key of ['../escape.png', '.content-types', 'a/b.png', '']) {
        await expect(store.put(key, Buffer.from('x'), 'image/png')).rejects.toThrow('not a blob key');
        await expect(store.get(key)).rejects.toThrow('not a blob key');
      }
    });
  });
};
