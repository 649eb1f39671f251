import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createGuardedFetcher, type GuardedFetcher } from '../src/guarded-fetcher.js';
import { startImageServer, testImageBytes, type ImageServer } from '../src/testing/image-server.js';

describe('the image server of tests and benchmarks', () => {
  let images: ImageServer;
  let fetcher: GuardedFetcher;

  beforeAll(async () => {
    images = await startImageServer();
    fetcher = createGuardedFetcher({ allowList: { cidrs: ['127.0.0.1/32'] } });
  });

  afterAll(async () => {
    await fetcher.close();
    await images.close();
  });

  it('keeps its connections alive, so fetches through the guard reuse them, as with an image host', async () => {
    const names = ['first', 'second', 'third', 'fourth', 'fifth'];
    for (const name of names) {
      const fetched = await fetcher.fetch(images.imageUrl(name));
      expect(fetched.body).toEqual(testImageBytes(name));
    }
    expect(images.requests()).toBe(names.length);
    // A connection per image when the server announced less than the fetcher's margin (`Keep-Alive: timeout=1`).
    expect(images.connections()).toBeLessThan(names.length);
  });
});
