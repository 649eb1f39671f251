import { describe, expect, it } from '@jest/globals';
import ExcelJS from 'exceljs';
import { isAppError } from '@marketplace/platform';
import { importRowsOf, readImportTable } from '../src/contexts/listings/imports/import-file.js';

const violationsOfCall = (call: () => unknown): unknown => {
  try {
    call();
  } catch (error) {
    if (isAppError(error)) return error.violations;
    throw error;
  }
  throw new Error('accepted');
};

describe('import rows', () => {
  it('maps each row to the body of POST /api/products, leaving empty cells out', () => {
    const rows = importRowsOf([
      ['name', 'description', 'sku', 'price', 'quantity', 'galleryImageUrls', 'promotePublicly'],
      [
        'Pallet of drills',
        '40 cordless drills',
        'DR-1',
        '$1,250.50',
        '40',
        'https://a.test/1.png | https://a.test/2.png',
        'yes',
      ],
      ['Boxed kettles', 'Returns, tested', 'KT-2', '', '', '', ''],
    ]);
    expect(rows).toEqual([
      {
        row: 2,
        body: {
          name: 'Pallet of drills',
          description: '40 cordless drills',
          sku: 'DR-1',
          price: 1250.5,
          quantity: 40,
          galleryImageUrls: ['https://a.test/1.png', 'https://a.test/2.png'],
          promotePublicly: true,
        },
      },
      { row: 3, body: { name: 'Boxed kettles', description: 'Returns, tested', sku: 'KT-2' } },
    ]);
  });

  it('names the row and column of every bad cell, and skips blank rows', () => {
    const rows = importRowsOf([
      ['name', 'description', 'price', 'quantity', 'instantCheckout'],
      ['', '', '', '', ''],
      ['A', 'B', 'ten', '2.5', 'maybe'],
      ['A', 'B', '10', '2', 'false', 'stray'],
    ]);
    expect(rows).toEqual([
      {
        row: 3,
        errors: [
          { row: 3, column: 'price', message: 'must be a number, not "ten"' },
          { row: 3, column: 'quantity', message: 'must be a whole number, not "2.5"' },
          { row: 3, column: 'instantCheckout', message: 'must be true or false, not "maybe"' },
        ],
      },
      { row: 4, errors: [{ row: 4, column: 'F', message: 'has a value but no column in the header row' }] },
    ]);
  });

  it('refuses a header with unknown, repeated or missing columns, naming each', () => {
    expect(violationsOfCall(() => importRowsOf([['name', 'prce', 'name']]))).toEqual([
      { path: 'columns.B', message: expect.stringContaining('"prce" is not a template column') },
      { path: 'columns.C', message: '"name" appears twice in the header row' },
      { path: 'columns', message: 'the header row needs a "description" column' },
    ]);
    expect(violationsOfCall(() => importRowsOf([]))).toEqual([
      { path: 'file', message: expect.stringContaining('needs a header row') },
    ]);
  });
});

describe('import files', () => {
  it('reads CSV with quoted cells and a byte order mark', async () => {
    const csv = '\uFEFFname,description,price\n"Drills, boxed","Line one\nline two",12.5\n';
    expect(await readImportTable('csv', Buffer.from(csv))).toEqual([
      ['name', 'description', 'price'],
      ['Drills, boxed', 'Line one\nline two', '12.5'],
    ]);
  });

  it('reads the first sheet of an XLSX file, numbers and gaps included', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Listings');
    sheet.addRow(['name', 'description', 'price', 'quantity']);
    sheet.addRow(['Drills', 'Boxed', 12.5, 3]);
    sheet.addRow(['Kettles', null, 4]);
    const bytes = Buffer.from(await workbook.xlsx.writeBuffer());
    expect(await readImportTable('xlsx', bytes)).toEqual([
      ['name', 'description', 'price', 'quantity'],
      ['Drills', 'Boxed', '12.5', '3'],
      ['Kettles', '', '4'],
    ]);
  });

  it('answers a 400 naming the file for bytes that are not the format', async () => {
    await expect(readImportTable('xlsx', Buffer.from('name,description\n'))).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'file', message: expect.stringContaining('is not a readable XLSX file') }],
    });
    await expect(readImportTable('csv', Buffer.from('"unterminated\n'))).rejects.toMatchObject({
      violations: [{ path: 'file', message: expect.stringContaining('is not a readable CSV file') }],
    });
  });
});
