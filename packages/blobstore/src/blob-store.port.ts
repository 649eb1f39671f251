/** A blob and the content type it was stored with. */
export interface StoredBlob {
  readonly body: Buffer;
  readonly contentType: string;
}

/**
 * Content-addressed storage for listing images: the key is derived from the bytes (`<sha256>.<ext>`), so a put
 * of an existing key stores the same bytes again and is harmless; blobs are never changed nor deleted.
 */
export interface BlobStore {
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** Undefined when nothing is stored under the key. */
  get(key: string): Promise<StoredBlob | undefined>;
}

/** Keys are one path segment of letters, digits, `.`, `_` and `-`, not starting with a dot: no traversal. */
const BLOB_KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

export const isBlobKey = (key: string): boolean => BLOB_KEY.test(key);

export const assertBlobKey = (key: string): void => {
  if (!isBlobKey(key)) throw new Error(`not a blob key: ${JSON.stringify(key)}`);
};
