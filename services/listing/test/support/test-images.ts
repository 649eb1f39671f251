import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobStore } from '@marketplace/blobstore';
import { createFilesystemBlobStore } from '@marketplace/blobstore';
import type { GuardedFetcher } from '@marketplace/outbound-http';
import { createGuardedFetcher } from '@marketplace/outbound-http';
import type { ImageServer } from '@marketplace/outbound-http/testing';
import { startImageServer } from '@marketplace/outbound-http/testing';
import { ImageLibraryTable } from '../../src/adapters/image-library.table.js';
import { RecentImageLibrary } from '../../src/adapters/recent-image-library.js';
import type { ListingDependencies } from '../../src/application/create-listing.js';

/** The loopback address the local image server listens on, allow-listed as OUTBOUND_ALLOW_HOSTS would. */
export const IMAGE_SERVER_ALLOW_LIST = { cidrs: ['127.0.0.1/32'] };

/** A local image server, a fresh filesystem blob store and a fetcher allowed to reach the server. */
export class TestImages {
  private constructor(
    readonly server: ImageServer,
    readonly blobs: BlobStore,
    readonly fetcher: GuardedFetcher,
  ) {}

  static async start(): Promise<TestImages> {
    const blobs = createFilesystemBlobStore(mkdtempSync(join(tmpdir(), 'listing-images-')));
    return new TestImages(
      await startImageServer(),
      blobs,
      createGuardedFetcher({ allowList: IMAGE_SERVER_ALLOW_LIST }),
    );
  }

  /** The image parts of ListingDependencies over `schema`'s image library (empty: the schema is fresh). */
  dependencies(schema: string): Pick<ListingDependencies, 'images' | 'imageLibrary' | 'recentImages'> {
    const imageLibrary = new ImageLibraryTable(schema);
    const recentImages = new RecentImageLibrary(imageLibrary);
    return {
      images: {
        fetcher: this.fetcher,
        blobs: this.blobs,
        findLibraryImage: async (category, words) => recentImages.mostSimilar(category, words),
      },
      imageLibrary,
      recentImages,
    };
  }

  async stop(): Promise<void> {
    await this.fetcher.close();
    await this.server.close();
  }
}
