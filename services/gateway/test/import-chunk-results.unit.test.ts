import { describe, expect, it } from '@jest/globals';
import { chunkResultsOf } from '../src/contexts/listings/imports/import.worker.js';

const TIMED_OUT = 'did not answer within 10 seconds';

describe('an import chunk’s results', () => {
  it('reports an image its host never sent as the error of its row and column, the gallery entry named', () => {
    const chunk = {
      chunk: 12,
      rows: [12, 13, 14].map((row) => ({ row, body: { name: `Item ${row}` } })),
    };
    const results = chunkResultsOf(chunk, {
      results: [
        { index: 0, status: 'error', message: 'images', errors: [{ field: 'imageUrl', message: TIMED_OUT }] },
        { index: 1, status: 'created', product_id: 'product_9', version: 1 },
        {
          index: 2,
          status: 'error',
          message: 'images',
          errors: [{ field: 'galleryImageUrls/1', message: TIMED_OUT }],
        },
      ],
      summary: { created: 1, updated: 0, unchanged: 0, error: 2 },
    });
    expect(results).toEqual([
      { row: 12, status: 'error', errors: [{ row: 12, column: 'imageUrl', message: TIMED_OUT }] },
      { row: 13, status: 'created', productId: 'product_9', errors: [] },
      {
        row: 14,
        status: 'error',
        errors: [{ row: 14, column: 'galleryImageUrls', message: `entry 2 ${TIMED_OUT}` }],
      },
    ]);
  });
});
