import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { CompanionWrite } from '@marketplace/eventsourcing';
import type { ImageLibraryEntry, ImageLibraryRecord } from '../application/create-listing.js';

/**
 * The listing service's own image library: one row per listing whose seller sent an image, with the title's
 * words, so a listing sent without `imageUrl` can borrow the hosted image of the most similar listing of its
 * category. Written by the statement (or transaction) that creates the listing, so it holds exactly the listings that exist.
 */
export const imageLibraryMigration: Migration = {
  id: 'listing-002-image-library',
  sql: (schema) => `
    CREATE TABLE ${schema}.image_library (
      product_id text PRIMARY KEY,
      category text NOT NULL,
      title_words text[] NOT NULL,
      image_path text NOT NULL,
      added_at timestamptz NOT NULL
    );
    CREATE INDEX image_library_category ON ${schema}.image_library (category);
    CREATE INDEX image_library_title_words ON ${schema}.image_library USING gin (title_words);
  `,
};

/** Ranking the newest candidates only keeps the lookup's cost flat however large a category grows. */
export const IMAGE_LIBRARY_CANDIDATES = 1_000;

/** The newest candidates of a category are found by this index, not by sorting the category. */
export const imageLibraryRecentMigration: Migration = {
  id: 'listing-004-image-library-recent',
  sql: (schema) => `
    CREATE INDEX image_library_category_added_at ON ${schema}.image_library (category, added_at DESC);
  `,
};

/** Replicas catch up with each other's entries by `added_at` alone (RecentImageLibrary.catchUp). */
export const imageLibraryAddedAtMigration: Migration = {
  id: 'listing-005-image-library-added-at',
  sql: (schema) => `
    CREATE INDEX image_library_added_at ON ${schema}.image_library (added_at);
  `,
};

type EntryRow = {
  readonly product_id: string;
  readonly category: string;
  readonly title_words: string[];
  readonly image_path: string;
  readonly added_at_ms: number;
};

const toEntry = (row: EntryRow): ImageLibraryEntry => ({
  productId: row.product_id,
  category: row.category,
  titleWords: row.title_words,
  imagePath: row.image_path,
  addedAtMs: Math.round(row.added_at_ms),
});

/** The library's rows: written with the listing that sent the image, read by RecentImageLibrary. */
export class ImageLibraryTable implements ImageLibraryRecord {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.image_library`;
  }

  /**
   * The entry as a companion of the append of its listing's events: one statement for both, so the listing
   * and its library row commit together without a transaction of their own.
   */
  rowOf(entry: ImageLibraryEntry): CompanionWrite {
    return {
      sql: ({ whenAppended, firstParam: p }) => `INSERT INTO ${this.table}
         (product_id, category, title_words, image_path, added_at)
       SELECT $${p}::text, $${p + 1}::text, $${p + 2}::text[], $${p + 3}::text, to_timestamp($${p + 4}::float8 / 1000.0)
        WHERE ${whenAppended}
       ON CONFLICT (product_id) DO UPDATE
         SET category = EXCLUDED.category, title_words = EXCLUDED.title_words, image_path = EXCLUDED.image_path`,
      params: [entry.productId, entry.category, entry.titleWords, entry.imagePath, entry.addedAtMs],
    };
  }

  async addMany(q: Queryable, entries: readonly ImageLibraryEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // Each entry's title words travel as one JSON array: unnest would flatten an array of arrays.
    await q.query(
      `INSERT INTO ${this.table} (product_id, category, title_words, image_path, added_at)
       SELECT product_id, category, ARRAY(SELECT jsonb_array_elements_text(words)), image_path,
              to_timestamp(added_at_ms / 1000.0)
         FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[], $5::float8[])
           AS entry (product_id, category, words, image_path, added_at_ms)
       ON CONFLICT (product_id) DO UPDATE
         SET category = EXCLUDED.category, title_words = EXCLUDED.title_words, image_path = EXCLUDED.image_path`,
      [
        entries.map((entry) => entry.productId),
        entries.map((entry) => entry.category),
        entries.map((entry) => JSON.stringify(entry.titleWords)),
        entries.map((entry) => entry.imagePath),
        entries.map((entry) => entry.addedAtMs),
      ],
    );
  }

  /** The newest `perCategory` entries of every category, newest first: what a replica loads at start. */
  async newestPerCategory(q: Queryable, perCategory: number): Promise<ImageLibraryEntry[]> {
    const { rows } = await q.query<EntryRow>(
      `SELECT product_id, category, title_words, image_path, added_at_ms
         FROM (SELECT product_id, category, title_words, image_path,
                      (extract(epoch FROM added_at) * 1000)::float8 AS added_at_ms,
                      row_number() OVER (PARTITION BY category ORDER BY added_at DESC) AS rank
                 FROM ${this.table}) AS ranked
        WHERE rank <= $1
        ORDER BY added_at_ms DESC`,
      [perCategory],
    );
    return rows.map(toEntry);
  }

  /** Entries added at or after `sinceMs` (by any replica), oldest first. */
  async addedSince(q: Queryable, sinceMs: number): Promise<ImageLibraryEntry[]> {
    const { rows } = await q.query<EntryRow>(
      `SELECT product_id, category, title_words, image_path,
              (extract(epoch FROM added_at) * 1000)::float8 AS added_at_ms
         FROM ${this.table}
        WHERE added_at >= to_timestamp($1 / 1000.0)
        ORDER BY added_at`,
      [sinceMs],
    );
    return rows.map(toEntry);
  }
}
