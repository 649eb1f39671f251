import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from '@jest/globals';
import { blobStoreConfigSchema, createBlobStore } from '../src/blob-store.config.js';
import { createS3BlobStore } from '../src/s3.blob-store.js';

const s3 = mockClient(S3Client);
const store = () =>
  createS3BlobStore({ client: new S3Client({ region: 'us-east-1' }), bucket: 'images', prefix: 'img/' });

describe('S3 blob store (against the client API)', () => {
  beforeEach(() => {
    s3.reset();
  });

  it('puts the object under the prefix with its content type', async () => {
    s3.on(PutObjectCommand).resolves({});
    await store().put('abc.png', Buffer.from('png'), 'image/png');
    const [call] = s3.commandCalls(PutObjectCommand);
    expect(call?.args[0].input).toEqual({
      Bucket: 'images',
      Key: 'img/abc.png',
      Body: Buffer.from('png'),
      ContentType: 'image/png',
    });
  });

  it('reads the object back with the stored content type', async () => {
    s3.on(GetObjectCommand, { Bucket: 'images', Key: 'img/abc.png' }).resolves({
      // The SDK's streaming body, reduced to the one method the adapter calls.
      Body: { transformToByteArray: async () => new Uint8Array(Buffer.from('png')) } as never,
      ContentType: 'image/png',
    });
    expect(await store().get('abc.png')).toEqual({ body: Buffer.from('png'), contentType: 'image/png' });
  });

  it('answers undefined for NoSuchKey and rethrows other failures', async () => {
    s3.on(GetObjectCommand, { Key: 'img/missing.png' }).rejects(
      new S3ServiceException({ name: 'NoSuchKey', $fault: 'client', $metadata: { httpStatusCode: 404 } }),
    );
    s3.on(GetObjectCommand, { Key: 'img/denied.png' }).rejects(
      new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 } }),
    );
    expect(await store().get('missing.png')).toBeUndefined();
    await expect(store().get('denied.png')).rejects.toThrow();
  });

  it('never sends a key that could leave the prefix', async () => {
    await expect(store().put('../x.png', Buffer.from('x'), 'image/png')).rejects.toThrow('not a blob key');
    expect(s3.calls()).toHaveLength(0);
  });
});

describe('blob store configuration', () => {
  it('defaults to files under DATA_DIR/images and needs a bucket for S3', () => {
    expect(blobStoreConfigSchema.parse({})).toMatchObject({
      BLOB_STORE: 'filesystem',
      S3_FORCE_PATH_STYLE: false,
    });
    expect(() => createBlobStore(blobStoreConfigSchema.parse({ BLOB_STORE: 's3' }), '.')).toThrow(
      'S3_BUCKET is required',
    );
    expect(() => blobStoreConfigSchema.parse({ BLOB_STORE: 'disk' })).toThrow();
  });
});
