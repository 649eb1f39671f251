import { describe, it } from '@jest/globals';
import { blobStoreConfigSchema, createBlobStore } from '../src/blob-store.config.js';
import { describeBlobStoreContract } from '../src/testing/index.js';

/**
 * The contract against a real S3-compatible store, only when S3_TEST_BUCKET names one (with S3_ENDPOINT,
 * S3_REGION, S3_FORCE_PATH_STYLE and credentials as the configuration reads them). None is available here.
 */
const bucket = process.env['S3_TEST_BUCKET'];

if (bucket) {
  const config = blobStoreConfigSchema.parse({
    ...process.env,
    BLOB_STORE: 's3',
    S3_BUCKET: bucket,
    S3_PREFIX: 'contract-test/',
  });
  describeBlobStoreContract('S3', () => createBlobStore(config, '.'));
} else {
  describe('BlobStore contract: S3', () => {
    it.skip('needs S3_TEST_BUCKET naming a real S3-compatible bucket', () => undefined);
  });
}
