import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import type { BlobStore } from './blob-store.port.js';
import { createFilesystemBlobStore } from './filesystem.blob-store.js';
import { createS3BlobStore } from './s3.blob-store.js';

const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .default('false')
  .transform((value) => value === 'true' || value === '1');

/** The variables that choose and configure the blob store; one table in the root README documents them. */
export const blobStoreConfigSchema = z.object({
  BLOB_STORE: z.enum(['filesystem', 's3']).default('filesystem'),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  /** MinIO, R2 and other S3-compatible stores; absent: AWS. */
  S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  S3_FORCE_PATH_STYLE: booleanFlag,
  S3_PREFIX: z.string().default(''),
  /** Absent: the AWS SDK's default credential chain (instance role, env, profile). */
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
});

export type BlobStoreConfig = z.infer<typeof blobStoreConfigSchema>;

/** The images directory of the embedded store. */
export const imagesDirectoryOf = (dataDir: string): string => join(dataDir, 'images');

/** Opens the configured store: files under `DATA_DIR/images`, or an S3 bucket. */
export const createBlobStore = (config: BlobStoreConfig, dataDir: string): BlobStore => {
  if (config.BLOB_STORE === 'filesystem') return createFilesystemBlobStore(imagesDirectoryOf(dataDir));
  if (!config.S3_BUCKET) throw new Error('S3_BUCKET is required when BLOB_STORE=s3');
  const credentials =
    config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY
      ? { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY }
      : undefined;
  const client = new S3Client({
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    credentials,
  });
  return createS3BlobStore({ client, bucket: config.S3_BUCKET, prefix: config.S3_PREFIX });
};
