import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { validationError } from '@marketplace/platform';
import type { FieldViolation } from '@marketplace/platform';

/** The file types POST /api/products/imports takes (docs/imports.md). */
export const IMPORT_CONTENT_TYPES = {
  csv: 'text/csv',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const;
export type ImportFormat = keyof typeof IMPORT_CONTENT_TYPES;

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

/** A data row as POST /api/products would take it, or the cells that could not become one. */
export type ImportRow =
  | { readonly row: number; readonly body: Record<string, unknown> }
  | { readonly row: number; readonly errors: readonly RowError[] };

/** The gallery column holds several URLs; `|` never appears unescaped in a URL. */
const GALLERY_SEPARATOR = '|';
const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);

const cellValue = (kind: ColumnKind, text: string): { value: unknown } | { message: string } => {
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
      const number = Number(text.replace(/^\$/, '').replaceAll(',', ''));
      if (!Number.isFinite(number)) return { message: `must be a number, not "${text}"` };
      if (kind === 'integer' && !Number.isInteger(number))
        return { message: `must be a whole number, not "${text}"` };
      return { value: number };
    }
    case 'boolean': {
      const word = text.toLowerCase();
      if (TRUE_WORDS.has(word)) return { value: true };
      if (FALSE_WORDS.has(word)) return { value: false };
      return { message: `must be true or false, not "${text}"` };
    }
  }
};

/**
 * Checks the header row: it must name template columns, each once, including `name` and `description`. A
 * column the template does not know is refused rather than skipped, so a misspelt `prce` never drops every
 * price of the file unnoticed (docs/imports.md).
 */
const columnsOf = (header: readonly string[]): Column[] => {
  const violations: FieldViolation[] = [];
  const seen = new Set<string>();
  const columns = header.map((cell, at) => {
    const name = cell.trim();
    const letter = columnLetter(at);
    if (!isColumn(name)) {
      violations.push({
        path: `columns.${letter}`,
        message: `"${name}" is not a template column (docs/imports.md): ${IMPORT_COLUMNS.join(', ')}`,
      });
    } else if (seen.has(name)) {
      violations.push({ path: `columns.${letter}`, message: `"${name}" appears twice in the header row` });
    }
    seen.add(name);
    return name as Column;
  });
  for (const required of ['name', 'description'] as const) {
    if (!seen.has(required)) {
      violations.push({ path: 'columns', message: `the header row needs a "${required}" column` });
    }
  }
  if (violations.length > 0) throw validationError('invalid import file header', violations);
  return columns;
};

/** A spreadsheet column's letter: 0 is A, 26 is AA. */
const columnLetter = (at: number): string =>
  (at >= 26 ? columnLetter(Math.floor(at / 26) - 1) : '') + String.fromCharCode(65 + (at % 26));

/**
 * The data rows of a table whose first row is the header, as bodies of POST /api/products. An empty cell is no
 * field at all, so an update keeps the stored value. Rows with no cell filled are skipped.
 */
export const importRowsOf = (table: readonly (readonly string[])[]): ImportRow[] => {
  const [header, ...data] = table;
  if (header === undefined || header.every((cell) => cell.trim() === '')) {
    throw validationError('invalid import file', [
      { path: 'file', message: 'needs a header row naming the columns (docs/imports.md)' },
    ]);
  }
  const columns = columnsOf(header);
  const rows: ImportRow[] = [];
  data.forEach((cells, at) => {
    const row = at + 2;
    if (cells.every((cell) => cell.trim() === '')) return;
    const body: Record<string, unknown> = {};
    const errors: RowError[] = [];
    cells.forEach((cell, index) => {
      const column = columns[index];
      const text = cell.trim();
      if (text === '') return;
      if (column === undefined) {
        errors.push({
          row,
          column: columnLetter(index),
          message: 'has a value but no column in the header row',
        });
        return;
      }
      const converted = cellValue(COLUMN_KINDS[column], text);
      if ('message' in converted) errors.push({ row, column, message: converted.message });
      else body[column] = converted.value;
    });
    rows.push(errors.length > 0 ? { row, errors } : { row, body });
  });
  return rows;
};

/** A cell's text as the sheet shows it: numbers and booleans as written, formulas by their result. */
const textOfCell = (value: ExcelJS.CellValue): string => {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    if ('result' in value) return textOfCell(value.result);
    if ('richText' in value) return value.richText.map((part) => part.text).join('');
    if ('hyperlink' in value) return String(value.text);
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

/** The first sheet of an XLSX file, or the CSV file, as rows of cell text (csv-parse, exceljs: docs/imports.md). */
export const readImportTable = async (format: ImportFormat, bytes: Buffer): Promise<string[][]> => {
  if (format === 'csv') {
    try {
      const table: string[][] = parse(bytes, { bom: true, relax_column_count: true, skip_empty_lines: true });
      return table;
    } catch (error) {
      throw unreadable(format, error);
    }
  }
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch (error) {
    throw unreadable(format, error);
  }
  const sheet = workbook.worksheets[0];
  if (sheet === undefined) throw unreadable(format, new Error('it has no sheet'));
  const table: string[][] = [];
  sheet.eachRow({ includeEmpty: true }, (row, number) => {
    const cells: string[] = [];
    row.eachCell({ includeEmpty: true }, (cell, column) => {
      cells[column - 1] = textOfCell(cell.value);
    });
    table[number - 1] = Array.from(cells, (cell) => cell ?? '');
  });
  return Array.from(table, (cells) => cells ?? []);
};
