import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';

/**
 * The listing service's own image library: one row per listing whose seller sent an image, with the title's
 * words, so a listing sent without `imageUrl` can borrow the hosted image of the most similar listing of its
 * category. Written in the transaction that creates the listing, so it holds exactly the listings that exist.
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

export interface ImageLibraryEntry {
  readonly productId: string;
  readonly category: string;
  readonly titleWords: readonly string[];
  readonly imagePath: string;
  readonly addedAtMs: number;
}

export class ImageLibraryTable {
  private readonly table: string;

  constructor(
    schema: string,
    private readonly candidates = IMAGE_LIBRARY_CANDIDATES,
  ) {
    this.table = `${quoteIdent(schema)}.image_library`;
  }

  async add(q: Queryable, entry: ImageLibraryEntry): Promise<void> {
    await q.query(
      `INSERT INTO ${this.table} (product_id, category, title_words, image_path, added_at)
       VALUES ($1, $2, $3::text[], $4, to_timestamp($5 / 1000.0))
       ON CONFLICT (product_id) DO UPDATE
         SET category = EXCLUDED.category, title_words = EXCLUDED.title_words, image_path = EXCLUDED.image_path`,
      [entry.productId, entry.category, entry.titleWords, entry.imagePath, entry.addedAtMs],
    );
  }

  /**
   * The image of the listing in `category` sharing the most title words with `words` (the newest on a tie),
   * among the newest `candidates` sharing any; undefined when none shares a word.
   */
  async mostSimilar(q: Queryable, category: string, words: readonly string[]): Promise<string | undefined> {
    if (words.length === 0) return undefined;
    const { rows } = await q.query<{ image_path: string }>(
      `SELECT image_path
         FROM (SELECT image_path, title_words, added_at
                 FROM ${this.table}
                WHERE category = $1 AND title_words && $2::text[]
                ORDER BY added_at DESC
                LIMIT $3) AS candidates
        ORDER BY cardinality(ARRAY(SELECT unnest(title_words) INTERSECT SELECT unnest($2::text[]))) DESC,
                 added_at DESC
        LIMIT 1`,
      [category, words, this.candidates],
    );
    return rows[0]?.image_path;
  }
}
