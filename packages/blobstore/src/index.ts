export { assertBlobKey, isBlobKey, type BlobStore, type StoredBlob } from './blob-store.port.js';
export { createFilesystemBlobStore } from './filesystem.blob-store.js';
export { createS3BlobStore, type S3BlobStoreOptions } from './s3.blob-store.js';
export {
  blobStoreConfigSchema,
  createBlobStore,
  imagesDirectoryOf,
  type BlobStoreConfig,
} from './blob-store.config.js';
