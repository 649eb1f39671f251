import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import { ImageLibraryTable } from '../src/adapters/image-library.table.js';
import { listingMigrations } from '../src/adapters/listing.migrations.js';
import { titleWords } from '../src/domain/listing-images.js';

describe.each(testEngines())('image library on $name', ({ create }) => {
  const schema = freshSchemaName('image_library_test');
  let db: Database;
  const add = (library: ImageLibraryTable, productId: string, title: string, addedAtMs: number) =>
    library.add(db, {
      productId,
      category: 'electronics',
      titleWords: titleWords(title),
      imagePath: `/images/${productId}.png`,
      addedAtMs,
    });

  beforeAll(async () => {
    db = await create();
    await migrate(db, schema, listingMigrations);
  });

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it('ranks by shared title words, the newest on a tie, among the newest candidates only', async () => {
    const library = new ImageLibraryTable(schema, 2);
    await add(library, 'product_1', 'wireless bluetooth earbuds black', 1_000);
    await add(library, 'product_2', 'wireless charger', 2_000);
    await add(library, 'product_3', 'wireless mouse', 3_000);
    const words = titleWords('black wireless bluetooth earbuds');
    // product_1 shares the most words but is older than the two newest candidates.
    expect(await library.mostSimilar(db, 'electronics', words)).toBe('/images/product_3.png');
    expect(await new ImageLibraryTable(schema).mostSimilar(db, 'electronics', words)).toBe(
      '/images/product_1.png',
    );
    expect(await library.mostSimilar(db, 'apparel', words)).toBeUndefined();
    expect(await library.mostSimilar(db, 'electronics', [])).toBeUndefined();
  });
});
