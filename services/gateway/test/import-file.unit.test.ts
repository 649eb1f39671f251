import { describe, expect, it } from '@jest/globals';
import ExcelJS from 'exceljs';
import { isAppError } from '@marketplace/platform';
import {
  IMPORT_MAX_ROWS,
  importRowsOf,
  readImportTable,
} from '../src/contexts/listings/imports/import-file.js';
import { checkInflatedSize } from '../src/contexts/listings/imports/xlsx-inflated-size.js';

/** The signature of a zip's central directory record, little-endian. */
const CENTRAL_FILE_HEADER = Buffer.from([0x50, 0x4b, 0x01, 0x02]);

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
  it('reads numbers in decimal notation only: a decimal comma or hex is an error, not 1999 or 16', () => {
    const rows = importRowsOf([
      ['name', 'description', 'price', 'quantity'],
      ['A', 'B', '19,99', '0x10'],
      ['A', 'B', '$', ','],
      ['A', 'B', '1,2,3', '1e309'],
      ['A', 'B', '$1,250.50', '1e3'],
      ['A', 'B', '-$0.5', '+7'],
    ]);
    expect(rows).toEqual([
      {
        row: 2,
        errors: [
          { row: 2, column: 'price', message: 'must be a number, not "19,99"' },
          { row: 2, column: 'quantity', message: 'must be a number, not "0x10"' },
        ],
      },
      {
        row: 3,
        errors: [
          { row: 3, column: 'price', message: 'must be a number, not "$"' },
          { row: 3, column: 'quantity', message: 'must be a number, not ","' },
        ],
      },
      {
        row: 4,
        errors: [
          { row: 4, column: 'price', message: 'must be a number, not "1,2,3"' },
          { row: 4, column: 'quantity', message: 'must be a number, not "1e309"' },
        ],
      },
      { row: 5, body: { name: 'A', description: 'B', price: 1250.5, quantity: 1000 } },
      { row: 6, body: { name: 'A', description: 'B', price: -0.5, quantity: 7 } },
    ]);
  });

  it('makes a spreadsheet error value (#DIV/0!) an error of its cell, not a listing named so', () => {
    expect(
      importRowsOf([
        ['name', 'description', 'price'],
        ['#REF!', 'B', '#DIV/0!'],
      ]),
    ).toEqual([
      {
        row: 2,
        errors: [
          { row: 2, column: 'name', message: 'holds the spreadsheet error #REF!, not a value' },
          { row: 2, column: 'price', message: 'holds the spreadsheet error #DIV/0!, not a value' },
        ],
      },
    ]);
  });

  it('reports the stray cells right of the header once per row, and echoes at most 60 characters of a cell', () => {
    const rows = importRowsOf([
      ['name', 'description', 'price'],
      ['A', 'B', 'x'.repeat(1_000_000), ...Array<string>(100_000).fill('stray')],
    ]);
    expect(rows).toEqual([
      {
        row: 2,
        errors: [
          { row: 2, column: 'price', message: `must be a number, not "${'x'.repeat(60)}…"` },
          {
            row: 2,
            column: 'D',
            message: 'has a value but no column in the header row (and so do 99999 more cells to its right)',
          },
        ],
      },
    ]);
  });

  it('names the first 20 problems of a header of a million columns, and counts the rest', () => {
    const violations = violationsOfCall(() =>
      importRowsOf([['name', 'description', ...Array<string>(1_000_000).fill('x')]]),
    ) as { path: string; message: string }[];
    expect(violations).toHaveLength(21);
    expect(violations[0]).toMatchObject({ path: 'columns.C' });
    expect(violations[20]).toEqual({
      path: 'columns',
      message: '999980 more columns are not template columns or repeat one',
    });
  });

  it(`refuses more than ${IMPORT_MAX_ROWS} data rows, blank rows not counted`, () => {
    const row = ['A', 'B'];
    const table = [['name', 'description'], ...Array<string[]>(IMPORT_MAX_ROWS).fill(row), ['', '']];
    expect(importRowsOf(table)).toHaveLength(IMPORT_MAX_ROWS);
    expect(violationsOfCall(() => importRowsOf([...table, row]))).toEqual([
      {
        path: 'file',
        message: `has more than ${IMPORT_MAX_ROWS} data rows; send at most ${IMPORT_MAX_ROWS} per import`,
      },
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
      ['Kettles', undefined, '4'], // a gap stays a hole: the table is as sparse as the sheet
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

describe('hostile import files', () => {
  const sheetBytes = async (fill: (sheet: ExcelJS.Worksheet) => void): Promise<Buffer> => {
    const workbook = new ExcelJS.Workbook();
    fill(workbook.addWorksheet('Listings'));
    return Buffer.from(await workbook.xlsx.writeBuffer());
  };

  it('refuses a CSV file that is not UTF-8, naming the line, and reads UTF-16 with its byte order mark', async () => {
    const latin1 = Buffer.from('name,description\nChairs,ok\nCafé chairs,desc\n', 'latin1');
    await expect(readImportTable('csv', latin1)).rejects.toMatchObject({
      violations: [
        {
          path: 'file',
          message: 'is not UTF-8 text (line 3 has a byte that is not); save it as "CSV UTF-8"',
        },
      ],
    });
    const utf16 = Buffer.from('\uFEFFname,description\nCafé chairs,desc\n', 'utf16le');
    expect(await readImportTable('csv', utf16)).toEqual([
      ['name', 'description'],
      ['Café chairs', 'desc'],
    ]);
  });

  it('ends a CSV row at CRLF, LF or CR, however a file mixes them', async () => {
    const csv = 'name,description\r\nA,B\rC,D\nE,"F\rG"\r\n';
    expect(await readImportTable('csv', Buffer.from(csv))).toEqual([
      ['name', 'description'],
      ['A', 'B'],
      ['C', 'D'],
      ['E', 'F\rG'],
    ]);
  });

  it('stops reading a CSV at the first row past the limit', async () => {
    const csv = `name,description\n${'a\n'.repeat(2_000_000)}`;
    await expect(readImportTable('csv', Buffer.from(csv))).rejects.toMatchObject({
      violations: [
        { path: 'file', message: expect.stringContaining(`has more than ${IMPORT_MAX_ROWS} data rows`) },
      ],
    });
  });

  it('reads error, rich-text hyperlink and merged cells as the sheet shows them', async () => {
    const bytes = await sheetBytes((sheet) => {
      sheet.addRow(['name', 'description', 'price', 'quantity']);
      sheet.getCell('A2').value = {
        text: { richText: [{ text: 'Pallet ' }, { font: { bold: true }, text: 'of drills' }] },
        hyperlink: 'https://example.com/drills',
      } as unknown as ExcelJS.CellValue;
      sheet.getCell('B2').value = 'Boxed';
      sheet.getCell('C2').value = { error: '#DIV/0!' };
      sheet.getCell('C3').value = 12;
      sheet.mergeCells('C3:D3');
    });
    expect(await readImportTable('xlsx', bytes)).toEqual([
      ['name', 'description', 'price', 'quantity'],
      ['Pallet of drills', 'Boxed', '#DIV/0!'],
      [undefined, undefined, '12'],
    ]);
  });

  it('makes a formula the file holds no result of an error of its cell, not an empty cell', async () => {
    const bytes = await sheetBytes((sheet) => {
      sheet.addRow(['name', 'description', 'price', 'quantity']);
      sheet.addRow(['Drills', 'Boxed']);
      sheet.getCell('C2').value = { formula: '10*2', result: 20 };
      sheet.getCell('D2').value = { formula: 'C2/4' };
    });
    expect(importRowsOf(await readImportTable('xlsx', bytes))).toEqual([
      {
        row: 2,
        errors: [
          {
            row: 2,
            column: 'quantity',
            message: 'is a formula the file holds no result of: open and save it in a spreadsheet app',
          },
        ],
      },
    ]);
  });

  it('keeps a sheet sparse: a cell in column XFD is one cell, not 16,384', async () => {
    const bytes = await sheetBytes((sheet) => {
      sheet.addRow(['name', 'description']);
      for (let row = 2; row < 500; row++) sheet.getCell(`XFD${row}`).value = 'far';
    });
    const table = await readImportTable('xlsx', bytes);
    expect(table).toHaveLength(499);
    expect(Object.keys(table[1] ?? [])).toEqual(['16383']);
  });

  it('refuses an XLSX file that inflates past the limit, measured, not as its zip declares', async () => {
    const bytes = await sheetBytes((sheet) => {
      sheet.addRow(['name', 'description']);
      sheet.addRow(['A', 'x'.repeat(2 * 1024 * 1024)]);
    });
    await expect(checkInflatedSize(bytes, 1024 * 1024)).rejects.toMatchObject({
      violations: [{ path: 'file', message: expect.stringContaining('inflates to more than 1 MiB') }],
    });
    await expect(checkInflatedSize(bytes, 8 * 1024 * 1024)).resolves.toBeUndefined();
  });

  it('refuses an XLSX file whose zip understates how large a part inflates, as unreadable', async () => {
    const bytes = Buffer.from(
      await sheetBytes((sheet) => {
        sheet.addRow(['name', 'description']);
        sheet.addRow(['A', 'x'.repeat(64 * 1024)]);
      }),
    );
    // Every part declared 1 byte long in the central directory (its uncompressed size, 24 bytes into a record).
    for (
      let at = bytes.indexOf(CENTRAL_FILE_HEADER);
      at >= 0;
      at = bytes.indexOf(CENTRAL_FILE_HEADER, at + 4)
    )
      bytes.writeUInt32LE(1, at + 24);

    await expect(checkInflatedSize(bytes, 1024 * 1024)).rejects.toMatchObject({
      violations: [{ path: 'file', message: expect.stringContaining('is not a readable XLSX file') }],
    });
  });

  it('refuses a file that is no zip archive or a truncated one, naming the file', async () => {
    const bytes = await sheetBytes((sheet) => sheet.addRow(['name', 'description']));
    for (const broken of [Buffer.from('PK\u0003\u0004 not really'), bytes.subarray(0, bytes.length - 30)]) {
      await expect(readImportTable('xlsx', broken)).rejects.toMatchObject({
        violations: [{ path: 'file', message: expect.stringContaining('is not a readable XLSX file') }],
      });
    }
  });
});
