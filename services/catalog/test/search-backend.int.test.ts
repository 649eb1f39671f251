import { describe, expect, it } from '@jest/globals';
import { openSearchIndex, vectorAliasOf } from '../src/adapters/search-backend.js';
import { toSearchDocument } from '../src/application/product-search-document.js';
import { decodeListingEvent } from '../src/adapters/listing-event.decoder.js';
import { listingCreated, listingMessage } from './support/listing-events.js';
import { conceptEmbedder } from './support/concept-embedder.js';

describe('openSearchIndex', () => {
  it('opens the embedded index in a worker thread, which answers until closed', async () => {
    const { index, isAlive, close } = await openSearchIndex({ kind: 'embedded' });
    const product = decodeListingEvent(listingCreated(listingMessage(1)).value)!.product;

    await index.upsert(toSearchDocument(product));
    const { total } = await index.search({
      text: 'chargers',
      filters: { visibility: 'public' },
      limit: 5,
      offset: 0,
    });
    expect(isAlive()).toBe(true);
    await close();

    expect(total).toBe(1);
    expect(isAlive()).toBe(false);
    await expect(index.count()).rejects.toThrow('closed');
  });

  it('fails to open Elasticsearch that does not answer, instead of starting without an index', async () => {
    await expect(
      openSearchIndex({ kind: 'elasticsearch', url: 'http://127.0.0.1:9', alias: 'catalog-products' }),
    ).rejects.toThrow();
  });

  it('opens the HNSW vector index beside it when given an embedder, sized by its dimensions', async () => {
    const embedder = conceptEmbedder();
    const { semantic, close } = await openSearchIndex({ kind: 'embedded' }, embedder);
    const product = decodeListingEvent(listingCreated(listingMessage(1)).value)!.product;
    try {
      const [vector] = await embedder.embed(['phone chargers']);
      await semantic!.vectors.upsert(toSearchDocument(product), vector!);
      const hits = await semantic!.vectors.search({
        vector: vector!,
        filters: { visibility: 'public' },
        limit: 5,
      });
      expect(semantic!.embedder).toBe(embedder);
      expect(hits.map((hit) => hit.id)).toEqual([product.id]);
    } finally {
      await close();
    }
    expect(
      (
        await openSearchIndex({ kind: 'embedded' }).then(async (opened) => {
          await opened.close();
          return opened;
        })
      ).semantic,
    ).toBeUndefined();
  });

  it('names an Elasticsearch vector index per embedding space, outside the text index template', () => {
    const local = vectorAliasOf('catalog-products', 'local:wink-sg-100d:top100000:sif:v2');
    expect(local).toMatch(/^catalog-products_vectors_[0-9a-f]{12}$/);
    expect(vectorAliasOf('catalog-products', 'local:wink-sg-100d:top100000:sif:v2')).toBe(local);
    expect(vectorAliasOf('catalog-products', 'openai:https://api.example:text-embedding-3-small')).not.toBe(
      local,
    );
    // The text index's template covers `catalog-products-*`: the vector indexes must not fall under it.
    expect(local.startsWith('catalog-products-')).toBe(false);
  });
});
