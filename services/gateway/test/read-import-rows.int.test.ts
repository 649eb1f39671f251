import { describe, expect, it } from '@jest/globals';
import ExcelJS from 'exceljs';
import { eventLoopGapsDuring } from '@marketplace/database/testing';
import {
  importReadsInFlight,
  MAX_CONCURRENT_READS,
  readImportRows,
} from '../src/contexts/listings/imports/read-import-rows.js';

const HEADER = ['sku', 'name', 'description', 'category', 'condition', 'price', 'quantity'];

const spreadsheetOf = async (rows: number): Promise<Buffer> => {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Listings');
  sheet.addRow(HEADER);
  for (let n = 0; n < rows; n++) {
    sheet.addRow([
      `sku-${n}`,
      `Pallet of lamps lot ${n}`,
      'Desk lamps',
      'office_supplies',
      'overstock',
      19.99,
      5,
    ]);
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
};

/** Reading an uploaded file in a worker thread (docs/imports.md): the rows as the routes store them. */
describe('readImportRows', () => {
  it('reads a CSV and an XLSX into numbered rows, with bad cells as errors of their row and column', async () => {
    const csv = 'name,description,price\r\nDrills,Boxed,12.5\r\nKettles,Boxed,ten';
    expect(await readImportRows('csv', Buffer.from(csv))).toEqual([
      { row: 2, body: { name: 'Drills', description: 'Boxed', price: 12.5 } },
      { row: 3, errors: [{ row: 3, column: 'price', message: expect.any(String) }] },
    ]);
    const rows = await readImportRows('xlsx', await spreadsheetOf(3));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({ row: 2, body: { sku: 'sku-0', price: 19.99, quantity: 5 } });
  });

  it('refuses an unreadable file with a 400 naming the file, and the next upload still reads', async () => {
    await expect(readImportRows('xlsx', Buffer.from('name,description\n'))).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'file', message: expect.stringContaining('XLSX') }],
    });
    await expect(readImportRows('csv', Buffer.from('"unterminated\n'))).rejects.toMatchObject({
      kind: 'validation',
    });
    // The header's problems are refused too, naming the column.
    await expect(readImportRows('csv', Buffer.from('name,description,prce\nA,B,1\n'))).rejects.toMatchObject({
      kind: 'validation',
      violations: [expect.objectContaining({ path: expect.stringContaining('columns.C') })],
    });
    expect(await readImportRows('csv', Buffer.from('name,description\r\nA,B'))).toHaveLength(1);
  });

  it('refuses a file it cannot read in time, naming the file', async () => {
    await expect(readImportRows('xlsx', await spreadsheetOf(2_000), 1)).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'file', message: expect.stringContaining('could not be read within') }],
    });
  });

  it('refuses a file that needs more memory than the reading thread has, naming the file, and reads the next', async () => {
    // 40,000 rows take far more than 16 MB of heap; the thread ends, the gateway answers a 400.
    const csv = `name,description\n${'Pallet of lamps,Desk lamps\n'.repeat(40_000)}`;
    await expect(readImportRows('csv', Buffer.from(csv), 30_000, 16)).rejects.toMatchObject({
      kind: 'validation',
      violations: [
        { path: 'file', message: 'needs more than 16 MB of memory to read; send fewer rows or columns' },
      ],
    });
    expect(await readImportRows('csv', Buffer.from('name,description\r\nA,B'))).toHaveLength(1);
  });

  it(`reads at most ${MAX_CONCURRENT_READS} files at once; the others wait their turn and are read`, async () => {
    const bytes = await spreadsheetOf(3_000);
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, importReadsInFlight())), 2);
    try {
      const reads = await Promise.all(Array.from({ length: 5 }, () => readImportRows('xlsx', bytes)));
      expect(reads.map((rows) => rows.length)).toEqual([3_000, 3_000, 3_000, 3_000, 3_000]);
    } finally {
      clearInterval(watch);
    }
    expect(most).toBe(MAX_CONCURRENT_READS);
    expect(importReadsInFlight()).toBe(0);
  }, 60_000);

  it('refuses an upload as unavailable when no reader frees up within its time, and forgets it', async () => {
    const bytes = await spreadsheetOf(3_000);
    const busy = Array.from({ length: MAX_CONCURRENT_READS }, () => readImportRows('xlsx', bytes));
    await expect(readImportRows('xlsx', bytes, 50)).rejects.toMatchObject({ kind: 'unavailable' });
    expect((await Promise.all(busy)).map((rows) => rows.length)).toEqual(busy.map(() => 3_000));
    // The refused upload left no place in the queue: the next read starts at once and ends.
    expect(await readImportRows('xlsx', bytes)).toHaveLength(3_000);
    expect(importReadsInFlight()).toBe(0);
  }, 60_000);

  it('keeps the event loop free while a large spreadsheet is read', async () => {
    const bytes = await spreadsheetOf(8_000);
    const {
      result: rows,
      tookMs: elapsedMs,
      longestGapMs,
    } = await eventLoopGapsDuring(() => readImportRows('xlsx', bytes), 5);
    expect(rows).toHaveLength(8_000);
    // Read on this thread, the whole parse was one gap (all of the elapsed time); in the worker, the timer keeps
    // ticking. Half of it leaves room for a loaded machine descheduling us (a quarter failed at 633 of 2,407 ms).
    expect(longestGapMs).toBeLessThan(Math.max(300, elapsedMs / 2));
  }, 60_000);
});
