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
  /** How one call's fetches are bounded; default IMAGE_FETCH_LIMITS. */
  readonly fetchLimits?: ImageFetchLimits;
}

/**
 * How the image fetches of one call are bounded (docs/specification.md, "Listings" → Images), on top of each
 * fetch's own timeout: a bulk call of 1,000 items whose hosts all hang still answers within its deadline.
 */
export interface ImageFetchLimits {
  /** Fetches one call runs at once: a bulk call's creates and updates share them. */
  readonly fetchesAtOnce: number;
  /** The time one call may spend on images; then the fetches still waiting or running fail fast. */
  readonly callBudgetMs: number;
}

/**
 * 16 at once with 10 s per fetch: a call gets through at least 96 hanging images in its 60 s, and a bulk call
 * (deadline 120 s, BULK_UPSERT_LIMITS) keeps half its time for its writes.
 */
export const IMAGE_FETCH_LIMITS: ImageFetchLimits = { fetchesAtOnce: 16, callBudgetMs: 60_000 };

/**
 * One call's share of image fetching: a slot per fetch, one deadline for all of them. The deadline's timer runs
 * only while fetches do, so a call that is done holds none.
 */
export class ImageBudget {
  private readonly endsAt: number;
  private readonly deadline = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limits: ImageFetchLimits) {
    this.endsAt = performance.now() + limits.callBudgetMs;
  }

  private get spent(): boolean {
    return this.deadline.signal.aborted || performance.now() >= this.endsAt;
  }

  /**
   * Runs `work` in a free slot with a signal that aborts when the call's time runs out; undefined, without
   * running it, when the time ran out before a slot was free.
   */
  async run<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> {
    while (this.running >= this.limits.fetchesAtOnce && !this.spent) {
      await new Promise<void>((wake) => this.waiting.push(wake));
    }
    if (this.spent) return undefined;
    this.running++;
    this.timer ??= setTimeout(() => this.end(), this.endsAt - performance.now());
    try {
      return await work(this.deadline.signal);
    } finally {
      this.running--;
      if (this.running === 0 && this.waiting.length === 0) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
      this.waiting.shift()?.();
    }
  }

  /** The time is up: the fetches running are aborted, those waiting fail without a fetch. */
  private end(): void {
    this.timer = undefined;
    this.deadline.abort();
    this.waiting.splice(0).forEach((wake) => wake());
  }
}

/** A budget for one call's images, under the limits of `deps`. */
export const startImageBudget = (deps: ImageHostingDependencies): ImageBudget =>
  new ImageBudget(deps.fetchLimits ?? IMAGE_FETCH_LIMITS);

/** What the listing says about its images, after the rules accepted it. */
export interface ListingImagesRequest {
  readonly name: string;
  readonly category: string;
  readonly imageUrl?: string | undefined;
  readonly galleryImageUrls: readonly string[];
}

const durationOf = (ms: number): string => (ms % 1_000 === 0 ? `${ms / 1_000} seconds` : `${ms} ms`);

const fetchFailureMessage = (
  deps: ImageHostingDependencies,
  budget: ImageBudget,
  reason: OutboundFetchError['reason'],
): string => {
  switch (reason) {
    case 'bad_url':
      return 'must be an http or https URL';
    case 'forbidden_address':
      return 'points to an address the marketplace does not fetch from (private, loopback or link-local)';
    case 'too_many_redirects':
      return 'redirects too many times';
    case 'http_status':
      return 'did not answer with the image';
    case 'too_large':
      return 'is larger than 10 MiB';
    case 'timeout':
      return `did not answer within ${durationOf(deps.fetcher.timeoutMs)}`;
    case 'network':
      return 'could not be reached';
    case 'cancelled':
      return callBudgetSpent(budget);
  }
};

const callBudgetSpent = (budget: ImageBudget): string =>
  `was not fetched: this call's ${durationOf(budget.limits.callBudgetMs)} for fetching images ran out ` +
  '(slow image hosts); send the item again';

type Hosted = { readonly path: string } | { readonly violation: string };

/**
 * Fetches one image through the guard in a slot of the call's budget, checks it is a real image and stores it
 * under its content hash.
 */
const hostOne = async (deps: ImageHostingDependencies, budget: ImageBudget, url: string): Promise<Hosted> => {
  const hosted = await budget.run(async (signal): Promise<Hosted> => {
    let fetched;
    try {
      fetched = await deps.fetcher.fetch(url, {
        accept: 'image/jpeg, image/png, image/gif, image/webp',
        signal,
      });
    } catch (error) {
      if (error instanceof OutboundFetchError)
        return { violation: fetchFailureMessage(deps, budget, error.reason) };
      throw error;
    }
    const format = detectImageFormat(fetched.body);
    if (!isImageContentType(fetched.contentType) || !format) {
      return { violation: 'is not a jpeg, png, gif or webp image' };
    }
    const key = hostedImageKey(createHash('sha256').update(fetched.body).digest('hex'), format);
    await deps.blobs.put(key, fetched.body, format.contentType);
    return { path: hostedImagePath(key) };
  });
  return hosted ?? { violation: callBudgetSpent(budget) };
};

/**
 * Re-hosts the images a seller's changes name (a PUT): only the URLs sent, no library lookup (the listing has
 * an image already). Every failing URL is a violation on its path, all at once. `budget`: the call's, when the
 * changes are an item of a bulk call.
 */
export const hostChangedImages = async (
  deps: ImageHostingDependencies,
  changes: {
    readonly imageUrl?: string | undefined;
    readonly galleryImageUrls?: readonly string[] | undefined;
  },
  budget: ImageBudget = startImageBudget(deps),
): Promise<{ imageUrl?: string; galleryImageUrls?: string[] }> => {
  const gallery = changes.galleryImageUrls ?? [];
  const [main, ...hostedGallery] = await Promise.all(
    [changes.imageUrl, ...gallery].map((url) =>
      url === undefined ? Promise.resolve(undefined) : hostOne(deps, budget, url),
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
 * Every problem is reported at once, with the field path of the URL. `budget`: the call's, when the listing is
 * an item of a bulk call.
 */
export const hostListingImages = async (
  deps: ImageHostingDependencies,
  request: ListingImagesRequest,
  budget: ImageBudget = startImageBudget(deps),
): Promise<HostedImages> => {
  const [main, ...gallery] = await Promise.all(
    [request.imageUrl, ...request.galleryImageUrls].map((url) =>
      url === undefined ? Promise.resolve(undefined) : hostOne(deps, budget, url),
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
