import { describe, expect, it } from '@jest/globals';
import { openSearchIndex } from '../src/adapters/search-backend.js';
import { toSearchDocument } from '../src/application/product-search-document.js';
import { decodeListingEvent } from '../src/adapters/listing-event.decoder.js';
import { listingCreated, listingMessage } from './support/listing-events.js';

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
});
