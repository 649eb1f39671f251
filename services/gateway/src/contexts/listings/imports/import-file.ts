import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { isAppError, validationError } from '@marketplace/platform';
import type { FieldViolation } from '@marketplace/platform';
import { checkInflatedSize } from './xlsx-inflated-size.js';

/** The file types POST /api/products/imports takes (docs/imports.md). */
export const IMPORT_CONTENT_TYPES = {
  csv: 'text/csv',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const;
export type ImportFormat = keyof typeof IMPORT_CONTENT_TYPES;

/** More rows than this are several imports (docs/imports.md): the answer of GET stays a few megabytes. */
export const IMPORT_MAX_ROWS = 50_000;

/**
 * The template's columns: the fields of POST /api/products that a cell can hold (docs/imports.md). `shipping`
 * is an object and stays with PUT …/shipping.
 */
const COLUMN_KINDS = {
  name: 'text',
  description: 'text',
  sku: 'text',
  category: 'text',
  condition: 'text',
  price: 'number',
  quantity: 'integer',
  minOrderQuantity: 'integer',
  minQuoteQuantity: 'integer',
  brand: 'text',
  imageUrl: 'text',
  galleryImageUrls: 'list',
  promotePublicly: 'boolean',
  originalRetailPrice: 'number',
  instantCheckout: 'boolean',
} as const;
type ColumnKind = (typeof COLUMN_KINDS)[keyof typeof COLUMN_KINDS];
export const IMPORT_COLUMNS = Object.keys(COLUMN_KINDS) as (keyof typeof COLUMN_KINDS)[];
type Column = (typeof IMPORT_COLUMNS)[number];

const isColumn = (name: string): name is Column => Object.hasOwn(COLUMN_KINDS, name);

/** One problem with one cell, as the import's answer reports it: row 1 is the header. */
export interface RowError {
  readonly row: number;
  readonly column: string;
  readonly message: string;
}

/**
 * A cell of the file's table: its text, or why its text cannot be known (a formula the file holds no computed
 * result of), which is an error of its row and column wherever it is.
 */
export type TableCell = string | { readonly unreadable: string };

/** A data row as POST /api/products would take it, or the cells that could not become one. */
export type ImportRow =
  | { readonly row: number; readonly body: Record<string, unknown> }
  | { readonly row: number; readonly errors: readonly RowError[] };

/** The gallery column holds several URLs; `|` never appears unescaped in a URL. */
const GALLERY_SEPARATOR = '|';
const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);

/** A cell's text inside a message: a megabyte-long cell is not echoed whole into every error. */
const quoted = (text: string): string => `"${text.length > 60 ? `${text.slice(0, 60)}…` : text}"`;

/**
 * Decimal notation as sheets write it: an optional sign and `$`, digits either ungrouped or in comma-separated
 * thousands, a fraction, an exponent (a sheet's `1E+21`). `19,99` (a decimal comma) and `0x10` are refused
 * rather than read as 1999 and 16 (docs/imports.md).
 */
const NUMBER_PATTERN = /^[+-]?\$?(?=\.?\d)(?:\d{1,3}(?:,\d{3})+|\d*)(?:\.\d*)?(?:e[+-]?\d+)?$/i;

/** What a spreadsheet shows in a cell whose formula failed; exported to CSV as that text (docs/imports.md). */
const SPREADSHEET_ERRORS = new Set([
  '#NULL!',
  '#DIV/0!',
  '#VALUE!',
  '#REF!',
  '#NAME?',
  '#NUM!',
  '#N/A',
  '#GETTING_DATA',
  '#SPILL!',
  '#CALC!',
]);

const cellValue = (kind: ColumnKind, text: string): { value: unknown } | { message: string } => {
  if (SPREADSHEET_ERRORS.has(text.toUpperCase())) {
    return { message: `holds the spreadsheet error ${text}, not a value` };
  }
  switch (kind) {
    case 'text':
      return { value: text };
    case 'list':
      return {
        value: text
          .split(GALLERY_SEPARATOR)
          .map((part) => part.trim())
          .filter((part) => part !== ''),
      };
    case 'number':
    case 'integer': {
      // A price cell may carry a currency sign or thousands separators, as spreadsheets format them.
      const number = NUMBER_PATTERN.test(text) ? Number(text.replace('$', '').replaceAll(',', '')) : NaN;
      if (!Number.isFinite(number)) return { message: `must be a number, not ${quoted(text)}` };
      if (kind === 'integer' && !Number.isInteger(number))
        return { message: `must be a whole number, not ${quoted(text)}` };
      return { value: number };
    }
    case 'boolean': {
      const word = text.toLowerCase();
      if (TRUE_WORDS.has(word)) return { value: true };
      if (FALSE_WORDS.has(word)) return { value: false };
      return { message: `must be true or false, not ${quoted(text)}` };
    }
  }
};

/**
 * Checks the header row: it must name template columns, each once, including `name` and `description`. A
 * column the template does not know is refused rather than skipped, so a misspelt `prce` never drops every
 * price of the file unnoticed (docs/imports.md).
 */
const columnsOf = (header: readonly TableCell[]): Column[] => {
  const violations: FieldViolation[] = [];
  let unnamed = 0;
  // A header of millions of columns is named by its first problems and a count, not a violation each.
  const refuse = (violation: FieldViolation) => {
    if (violations.length < MAX_HEADER_VIOLATIONS) violations.push(violation);
    else unnamed += 1;
  };
  const seen = new Set<string>();
  const columns = header.map((cell, at) => {
    const name = typeof cell === 'string' ? cell.trim() : '(a formula with no computed value)';
    const letter = columnLetter(at);
    if (!isColumn(name)) {
      refuse({
        path: `columns.${letter}`,
        message: `${quoted(name)} is not a template column (docs/imports.md): ${IMPORT_COLUMNS.join(', ')}`,
      });
    } else if (seen.has(name)) {
      refuse({ path: `columns.${letter}`, message: `"${name}" appears twice in the header row` });
    }
    seen.add(name);
    return name as Column;
  });
  for (const required of ['name', 'description'] as const) {
    if (!seen.has(required)) {
      violations.push({ path: 'columns', message: `the header row needs a "${required}" column` });
    }
  }
  if (unnamed > 0) {
    violations.push({
      path: 'columns',
      message: `${unnamed} more columns are not template columns or repeat one`,
    });
  }
  if (violations.length > 0) throw validationError('invalid import file header', violations);
  return columns;
};

/** The header's problems named one by one; the template has 15 columns, so a real file has fewer. */
const MAX_HEADER_VIOLATIONS = 20;

const tooManyRows = (): Error =>
  validationError('invalid import file', [
    {
      path: 'file',
      message: `has more than ${IMPORT_MAX_ROWS} data rows; send at most ${IMPORT_MAX_ROWS} per import`,
    },
  ]);

const isBlank = (cells: readonly TableCell[]): boolean =>
  cells.every((cell) => typeof cell === 'string' && cell.trim() === '');

/** A spreadsheet column's letter: 0 is A, 26 is AA. */
const columnLetter = (at: number): string =>
  (at >= 26 ? columnLetter(Math.floor(at / 26) - 1) : '') + String.fromCharCode(65 + (at % 26));

/**
 * The data rows of a table whose first row is the header, as bodies of POST /api/products. An empty cell is no
 * field at all, so an update keeps the stored value. Rows with no cell filled are skipped, and so are holes: a
 * sheet's table is sparse (a missing row or cell is empty). More than IMPORT_MAX_ROWS rows refuse the file.
 */
export const importRowsOf = (table: readonly (readonly TableCell[])[]): ImportRow[] => {
  const header = table[0];
  const data = table.slice(1);
  if (header === undefined || isBlank(header)) {
    throw validationError('invalid import file', [
      { path: 'file', message: 'needs a header row naming the columns (docs/imports.md)' },
    ]);
  }
  const columns = columnsOf(header);
  const rows: ImportRow[] = [];
  data.forEach((cells, at) => {
    const row = at + 2;
    if (isBlank(cells)) return;
    if (rows.length === IMPORT_MAX_ROWS) throw tooManyRows();
    const body: Record<string, unknown> = {};
    const errors: RowError[] = [];
    // Cells right of the header are one error, at the first of them: a row of a million stray cells is one line.
    const stray: number[] = [];
    cells.forEach((cell, index) => {
      const column = columns[index];
      const text = typeof cell === 'string' ? cell.trim() : cell;
      if (text === '') return;
      if (column === undefined) {
        stray.push(index);
        return;
      }
      const converted =
        typeof text === 'string' ? cellValue(COLUMN_KINDS[column], text) : { message: text.unreadable };
      if ('message' in converted) errors.push({ row, column, message: converted.message });
      else body[column] = converted.value;
    });
    const [firstStray] = stray;
    if (firstStray !== undefined) {
      errors.push({
        row,
        column: columnLetter(firstStray),
        message:
          'has a value but no column in the header row' +
          (stray.length > 1 ? ` (and so do ${stray.length - 1} more cells to its right)` : ''),
      });
    }
    rows.push(errors.length > 0 ? { row, errors } : { row, body });
  });
  return rows;
};

/**
 * A cell's text as the sheet shows it: numbers and booleans as written, formulas by their result. A file written
 * by a program rather than a spreadsheet app may hold a formula without its result: that cell is not read as
 * empty, which would silently keep a listing's stored price (docs/imports.md).
 */
const textOfCell = (value: ExcelJS.CellValue): TableCell => {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    if (('formula' in value || 'sharedFormula' in value) && value.result === undefined) {
      return {
        unreadable: 'is a formula the file holds no result of: open and save it in a spreadsheet app',
      };
    }
    if ('result' in value) return textOfCell(value.result);
    if ('richText' in value) return value.richText.map((part) => part.text).join('');
    if ('hyperlink' in value) return textOfCell(value.text);
    if ('error' in value) return String(value.error);
    return '';
  }
  return String(value);
};

const unreadable = (format: ImportFormat, cause: unknown): Error =>
  validationError('unreadable import file', [
    {
      path: 'file',
      message: `is not a readable ${format.toUpperCase()} file: ${cause instanceof Error ? cause.message : String(cause)}`,
    },
  ]);

/** Where a CSV file stops being UTF-8, for the message: its line, counted as an editor counts them. */
const lineOfFirstInvalidByte = (bytes: Buffer): number => {
  const text = bytes.toString('utf8');
  return text.slice(0, text.indexOf('\uFFFD')).split(/\r\n|\r|\n/).length;
};

const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);

/**
 * A CSV file's text must be UTF-8 (or UTF-16 with its byte order mark, as "Unicode text" is saved): a Windows-1252
 * export would otherwise import `Café` as `Caf�` without a word (docs/imports.md).
 */
const checkCsvEncoding = (bytes: Buffer): void => {
  if (bytes.subarray(0, 2).equals(UTF16LE_BOM)) return; // csv-parse decodes it (`bom`)
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw validationError('unreadable import file', [
      {
        path: 'file',
        message: `is not UTF-8 text (line ${lineOfFirstInvalidByte(bytes)} has a byte that is not); save it as "CSV UTF-8"`,
      },
    ]);
  }
};

/** The first sheet of an XLSX file, or the CSV file, as rows of cell text (csv-parse, exceljs: docs/imports.md). */
export const readImportTable = async (format: ImportFormat, bytes: Buffer): Promise<TableCell[][]> => {
  if (format === 'csv') {
    checkCsvEncoding(bytes);
    let filled = 0;
    try {
      const table: string[][] = parse(bytes, {
        bom: true,
        relax_column_count: true,
        skip_empty_lines: true,
        // Any of the three line ends ends a row, however a file mixes them.
        record_delimiter: ['\r\n', '\n', '\r'],
        // Stops at the first row past the limit rather than reading millions of them (the header is one more).
        on_record: (record: string[]) => {
          if (!isBlank(record) && ++filled > IMPORT_MAX_ROWS + 1) throw tooManyRows();
          return record;
        },
      });
      return table;
    } catch (error) {
      if (isAppError(error)) throw error;
      throw unreadable(format, error);
    }
  }
  await checkInflatedSize(bytes);
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch (error) {
    throw unreadable(format, error);
  }
  const sheet = workbook.worksheets[0];
  if (sheet === undefined) throw unreadable(format, new Error('it has no sheet'));
  // Sparse, as the sheet stores it: a row with one cell in column XFD is one cell, not 16,384.
  const table: TableCell[][] = [];
  sheet.eachRow((row, number) => {
    const cells: TableCell[] = [];
    row.eachCell((cell, column) => {
      // A merged range shows its value once, in its top-left cell; exceljs repeats it in each cell of the range.
      if (cell.type === ExcelJS.ValueType.Merge) return;
      cells[column - 1] = textOfCell(cell.value);
    });
    table[number - 1] = cells;
  });
  return table;
};
