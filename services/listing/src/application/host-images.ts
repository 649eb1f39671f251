import { createHash } from 'node:crypto';
import type { BlobStore } from '@marketplace/blobstore';
import type { GuardedFetcher } from '@marketplace/outbound-http';
import { OutboundFetchError } from '@marketplace/outbound-http';
import type { FieldViolation } from '@marketplace/platform';
import { validationError } from '@marketplace/platform';
import type { HostedImages } from '../domain/listing.commands.js';
import {
  detectImageFormat,
  hostedImageKey,
  hostedImagePath,
  isImageContentType,
  titleWords,
} from '../domain/listing-images.js';

export interface ImageHostingDependencies {
  readonly fetcher: GuardedFetcher;
  readonly blobs: BlobStore;
  /** The hosted image of the most similar listing of a category (by shared title words), if any. */
  readonly findLibraryImage: (category: string, words: readonly string[]) => Promise<string | undefined>;
  /** The shipped placeholder of a category, when nothing similar is found (absent: that is a 400). */
  readonly placeholderImage?: (category: string) => string | undefined;
}

/** What the listing says about its images, after the rules accepted it. */
export interface ListingImagesRequest {
  readonly name: string;
  readonly category: string;
  readonly imageUrl?: string | undefined;
  readonly galleryImageUrls: readonly string[];
}

const FETCH_FAILURE_MESSAGES: Record<OutboundFetchError['reason'], string> = {
  bad_url: 'must be an http or https URL',
  forbidden_address:
    'points to an address the marketplace does not fetch from (private, loopback or link-local)',
  too_many_redirects: 'redirects too many times',
  http_status: 'did not answer with the image',
  too_large: 'is larger than 10 MiB',
  timeout: 'did not answer within 10 seconds',
  network: 'could not be reached',
  cancelled: 'was not fetched in time',
};

type Hosted = { readonly path: string } | { readonly violation: string };

/** Fetches one image through the guard, checks it is a real image and stores it under its content hash. */
const hostOne = async (deps: ImageHostingDependencies, url: string): Promise<Hosted> => {
  let fetched;
  try {
    fetched = await deps.fetcher.fetch(url, { accept: 'image/jpeg, image/png, image/gif, image/webp' });
  } catch (error) {
    if (error instanceof OutboundFetchError) return { violation: FETCH_FAILURE_MESSAGES[error.reason] };
    throw error;
  }
  const format = detectImageFormat(fetched.body);
  if (!isImageContentType(fetched.contentType) || !format) {
    return { violation: 'is not a jpeg, png, gif or webp image' };
  }
  const key = hostedImageKey(createHash('sha256').update(fetched.body).digest('hex'), format);
  await deps.blobs.put(key, fetched.body, format.contentType);
  return { path: hostedImagePath(key) };
};

/**
 * Re-hosts the images a seller's changes name (a PUT): only the URLs sent, no library lookup (the listing has
 * an image already). Every failing URL is a violation on its path, all at once.
 */
export const hostChangedImages = async (
  deps: ImageHostingDependencies,
  changes: {
    readonly imageUrl?: string | undefined;
    readonly galleryImageUrls?: readonly string[] | undefined;
  },
): Promise<{ imageUrl?: string; galleryImageUrls?: string[] }> => {
  const gallery = changes.galleryImageUrls ?? [];
  const [main, ...hostedGallery] = await Promise.all(
    [changes.imageUrl, ...gallery].map((url) =>
      url === undefined ? Promise.resolve(undefined) : hostOne(deps, url),
    ),
  );
  const violations: FieldViolation[] = [];
  const pathOf = (hosted: Hosted | undefined, field: string): string => {
    if (hosted && 'violation' in hosted) violations.push({ path: field, message: hosted.violation });
    return hosted && 'path' in hosted ? hosted.path : '';
  };
  const imageUrl = main === undefined ? undefined : pathOf(main, 'imageUrl');
  const galleryImageUrls = hostedGallery.map((hosted, index) => pathOf(hosted, `galleryImageUrls/${index}`));
  if (violations.length > 0) {
    throw validationError(
      `images: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
      violations,
    );
  }
  return {
    ...(imageUrl === undefined ? {} : { imageUrl }),
    ...(changes.galleryImageUrls === undefined ? {} : { galleryImageUrls }),
  };
};

/**
 * Re-hosts a listing's images (docs/specification.md, "Listings" → Images): every URL is fetched through the outbound
 * guard, checked and stored as `/images/<sha256>.<ext>`. Without `imageUrl`, the image of the most similar
 * listing of the same category is borrowed from the library; nothing found is a 400 that asks for `imageUrl`.
 * Every problem is reported at once, with the field path of the URL.
 */
export const hostListingImages = async (
  deps: ImageHostingDependencies,
  request: ListingImagesRequest,
): Promise<HostedImages> => {
  const [main, ...gallery] = await Promise.all(
    [request.imageUrl, ...request.galleryImageUrls].map((url) =>
      url === undefined ? Promise.resolve(undefined) : hostOne(deps, url),
    ),
  );
  const violations: FieldViolation[] = [];
  const pathOf = (hosted: Hosted | undefined, field: string): string | undefined => {
    if (hosted && 'violation' in hosted) violations.push({ path: field, message: hosted.violation });
    return hosted && 'path' in hosted ? hosted.path : undefined;
  };
  let imageUrl = pathOf(main, 'imageUrl');
  const galleryImageUrls = gallery.map((hosted, index) => pathOf(hosted, `galleryImageUrls/${index}`) ?? '');
  let imagePlaceholder = false;
  if (request.imageUrl === undefined) {
    imageUrl = await deps.findLibraryImage(request.category, titleWords(request.name));
    if (imageUrl === undefined) {
      // docs/specification.md, "Listings": the image library never blocks a first listing.
      imageUrl = deps.placeholderImage?.(request.category);
      imagePlaceholder = imageUrl !== undefined;
    }
    if (imageUrl === undefined) {
      violations.push({
        path: 'imageUrl',
        message: `no image of a similar ${request.category} listing was found: send imageUrl`,
      });
    }
  }
  if (violations.length > 0) {
    throw validationError(
      `images: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
      violations,
    );
  }
  return { imageUrl, galleryImageUrls, ...(imagePlaceholder ? { imagePlaceholder } : {}) };
};
