import type { Queryable } from '@marketplace/database';
import type { ImageLibraryEntry, RecentImages } from '../application/create-listing.js';
import { IMAGE_LIBRARY_CANDIDATES, type ImageLibraryTable } from './image-library.table.js';

/** How often a replica reads the entries other replicas added (RecentImageLibrary.catchUp). */
export const IMAGE_LIBRARY_CATCH_UP_MS = 5_000;

/**
 * The image library as a publication reads it: the newest `perCategory` entries of each category in memory, so
 * a listing sent without `imageUrl` finds its image without a database round trip (ranking up to a thousand
 * rows in SQL cost 2-6 ms of PostgreSQL per publication: docs/architecture.md, "How work moves"). Loaded from
 * the table at start; this replica's own listings are remembered once their transaction committed, and the
 * other replicas' are read from the table by `catchUp` (the listing service runs it every few seconds).
 */
export class RecentImageLibrary implements RecentImages {
  /** Per category, newest first. */
  readonly #byCategory = new Map<string, ImageLibraryEntry[]>();
  readonly #known = new Set<string>();
  #newestMs = 0;

  constructor(
    private readonly table: ImageLibraryTable,
    private readonly perCategory = IMAGE_LIBRARY_CANDIDATES,
  ) {}

  async load(q: Queryable): Promise<void> {
    for (const entry of await this.table.newestPerCategory(q, this.perCategory)) this.remember(entry);
  }

  /** Remembers what any replica added since the newest entry known here. */
  async catchUp(q: Queryable): Promise<void> {
    for (const entry of await this.table.addedSince(q, this.#newestMs)) this.remember(entry);
  }

  /** A committed entry; one already known is ignored. Its words are kept distinct, so a lookup counts each once. */
  remember(committed: ImageLibraryEntry): void {
    if (this.#known.has(committed.productId)) return;
    const entries = this.#byCategory.get(committed.category) ?? [];
    let at = 0;
    while (at < entries.length && entries[at]!.addedAtMs > committed.addedAtMs) at++;
    if (at >= this.perCategory) return;
    const entry = { ...committed, titleWords: [...new Set(committed.titleWords)] };
    entries.splice(at, 0, entry);
    this.#known.add(entry.productId);
    for (const dropped of entries.splice(this.perCategory)) this.#known.delete(dropped.productId);
    this.#byCategory.set(entry.category, entries);
    this.#newestMs = Math.max(this.#newestMs, entry.addedAtMs);
  }

  /**
   * The image of the entry in `category` sharing the most title words with `words` (the newest on a tie), among
   * the newest entries of the category; undefined when none shares a word.
   */
  mostSimilar(category: string, words: readonly string[]): string | undefined {
    const wanted = new Set(words);
    let best: ImageLibraryEntry | undefined;
    let bestShared = 0;
    for (const entry of this.#byCategory.get(category) ?? []) {
      let shared = 0;
      for (const word of entry.titleWords) if (wanted.has(word)) shared++;
      // Newest first, so only a strictly larger overlap displaces an earlier (newer) entry.
      if (shared > bestShared) [best, bestShared] = [entry, shared];
    }
    return best?.imagePath;
  }
}
