import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import { ImageLibraryTable } from '../src/adapters/image-library.table.js';
import { listingMigrations } from '../src/adapters/listing.migrations.js';
import { RecentImageLibrary } from '../src/adapters/recent-image-library.js';
import { titleWords } from '../src/domain/listing-images.js';

describe.each(testEngines())('image library on $name', ({ create }) => {
  const schema = freshSchemaName('image_library_test');
  let db: Database;
  let table: ImageLibraryTable;
  const entry = (productId: string, title: string, addedAtMs: number, category = 'electronics') => ({
    productId,
    category,
    titleWords: titleWords(title),
    imagePath: `/images/${productId}.png`,
    addedAtMs,
  });
  /** Written to the table, as a batch's transaction does, and remembered by `library` once committed. */
  const add = async (library: RecentImageLibrary | undefined, ...args: Parameters<typeof entry>) => {
    const added = entry(...args);
    await table.addMany(db, [added]);
    library?.remember(added);
  };
  const words = titleWords('black wireless bluetooth earbuds');

  beforeAll(async () => {
    db = await create();
    await migrate(db, schema, listingMigrations);
    table = new ImageLibraryTable(schema);
    await add(undefined, 'product_1', 'wireless bluetooth earbuds black', 1_000);
    await add(undefined, 'product_2', 'wireless charger', 2_000);
    await add(undefined, 'product_3', 'wireless mouse', 3_000);
    await add(undefined, 'product_4', 'black wireless earbuds', 500, 'apparel');
  });

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it('ranks by shared title words, the newest on a tie, among the newest entries of the category only', async () => {
    const newestTwo = new RecentImageLibrary(table, 2);
    await newestTwo.load(db);
    // product_1 shares the most words but is older than the two newest entries.
    expect(newestTwo.mostSimilar('electronics', words)).toBe('/images/product_3.png');
    const all = new RecentImageLibrary(table);
    await all.load(db);
    expect(all.mostSimilar('electronics', words)).toBe('/images/product_1.png');
    expect(all.mostSimilar('apparel', words)).toBe('/images/product_4.png');
    expect(all.mostSimilar('toys', words)).toBeUndefined();
    expect(all.mostSimilar('electronics', [])).toBeUndefined();
    expect(all.mostSimilar('electronics', titleWords('garden hose'))).toBeUndefined();
  });

  it('counts a word an entry repeats once', () => {
    const library = new RecentImageLibrary(table);
    library.remember({ ...entry('product_8', 'black earbuds', 8_000), titleWords: ['black', 'earbuds'] });
    // Newer, but one word repeated shares fewer words than product_8.
    library.remember({
      ...entry('product_9', 'wireless', 9_000),
      titleWords: ['wireless', 'wireless', 'wireless'],
    });
    expect(library.mostSimilar('electronics', words)).toBe('/images/product_8.png');
  });

  it("answers this replica's new entries at once and another replica's after catching up", async () => {
    const mine = new RecentImageLibrary(table);
    const theirs = new RecentImageLibrary(table);
    await mine.load(db);
    await theirs.load(db);
    await add(mine, 'product_5', 'black wireless bluetooth earbuds', 5_000);
    expect(mine.mostSimilar('electronics', words)).toBe('/images/product_5.png');
    expect(theirs.mostSimilar('electronics', words)).toBe('/images/product_1.png');
    await theirs.catchUp(db);
    expect(theirs.mostSimilar('electronics', words)).toBe('/images/product_5.png');
  });
});
