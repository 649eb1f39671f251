import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { BlobStore } from '@marketplace/blobstore';
import { CATEGORIES } from '@marketplace/vocabulary';
import { hostedImageKey, hostedImagePath } from '../domain/listing-images.js';

/**
 * Shipped with the service: one neutral PNG per category, in `services/listing/assets/placeholders/`, found
 * from the compiled module (`dist/src/adapters/`) or from the source (`src/adapters/`, under jest).
 */
const PLACEHOLDER_DIRECTORY =
  [
    new URL('../../../assets/placeholders/', import.meta.url),
    new URL('../../assets/placeholders/', import.meta.url),
  ].find((directory) => existsSync(directory)) ?? new URL('../../../assets/placeholders/', import.meta.url);

/**
 * Stores the shipped placeholders in the blob store, content addressed like every hosted image (so every
 * replica and restart names the same path), and answers each category's path.
 */
export const loadPlaceholderImages = async (blobs: BlobStore): Promise<ReadonlyMap<string, string>> => {
  const paths = new Map<string, string>();
  for (const category of CATEGORIES) {
    const bytes = await readFile(new URL(`${category}.png`, PLACEHOLDER_DIRECTORY));
    const key = hostedImageKey(createHash('sha256').update(bytes).digest('hex'), {
      extension: 'png',
      contentType: 'image/png',
    });
    await blobs.put(key, bytes, 'image/png');
    paths.set(category, hostedImagePath(key));
  }
  return paths;
};
