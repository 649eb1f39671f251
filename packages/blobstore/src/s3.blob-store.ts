import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { BlobStore } from './blob-store.port.js';
import { assertBlobKey } from './blob-store.port.js';

export interface S3BlobStoreOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Prepended to every key, e.g. `images/`. */
  readonly prefix?: string;
  /** Bound on each request; default 10 s. */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

const isNotFound = (error: unknown): boolean => {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return name === 'NoSuchKey' || name === 'NotFound' || $metadata?.httpStatusCode === 404;
};

/** Blobs as objects of an S3-compatible store (AWS S3, MinIO, R2, ...): cluster mode, shared by every replica. */
export const createS3BlobStore = ({
  client,
  bucket,
  prefix = '',
  timeoutMs = DEFAULT_TIMEOUT_MS,
}: S3BlobStoreOptions): BlobStore => ({
  put: async (key, body, contentType) => {
    assertBlobKey(key);
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${key}`, Body: body, ContentType: contentType }),
      { abortSignal: AbortSignal.timeout(timeoutMs) },
    );
  },
  get: async (key) => {
    assertBlobKey(key);
    try {
      const signal = AbortSignal.timeout(timeoutMs);
      const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}${key}` }), {
        abortSignal: signal,
      });
      if (!object.Body) return undefined;
      const body = Buffer.from(await object.Body.transformToByteArray());
      return { body, contentType: object.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  },
});
