import { randomUUID } from 'node:crypto';
import express, { Router } from 'express';
import { z } from 'zod';
import { notFound, unavailable, unstorableTextViolations, validationError } from '@marketplace/platform';
import { BULK_UPSERT_MODES } from '@marketplace/vocabulary';
import { requireSeller } from '../../edge/account.js';
import { authenticate, authenticatedPrincipalOf } from '../../edge/http/auth.middleware.js';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { HttpProblem } from '../../edge/http/problem.js';
import { idempotencyKeyOf } from '../../edge/http/idempotency-key.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../edge/schemas/idempotency-key.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import type { ImportFormat } from './imports/import-file.js';
import type { ImportRow } from './imports/import-file.js';
import { IMPORT_CONTENT_TYPES } from './imports/import-file.js';
import { readImportRows } from './imports/read-import-rows.js';
import { importKeyOf, replayOf } from './imports/import-key.js';
import type {
  ImportView,
  ListingImportStore,
  StoredImportRow,
  UploadedImport,
} from './imports/import.ports.js';
import { IMPORT_STATUSES } from './imports/import.ports.js';

/** docs/imports.md: 10,000 rows of a few hundred bytes are a few megabytes; an XLSX file is smaller still. */
export const IMPORT_BODY_LIMIT_BYTES = 20 * 1024 * 1024;

/** The imports' store and the worker to wake after an upload; absent where the gateway has no imports. */
export interface ListingImports {
  readonly store: ListingImportStore;
  readonly wake: () => void;
}

export const importQuerySchema = z.object({
  mode: z
    .enum(BULK_UPSERT_MODES, { error: `must be one of ${BULK_UPSERT_MODES.join(', ')}` })
    .default('upsert_by_sku')
    .describe('upsert_by_sku (default): a row updates your listing with its sku; create: every row is new'),
});

const importIdSchema = z.object({ importId: z.uuid() });

const rowErrorOutput = z.object({ row: z.int(), column: z.string(), message: z.string() });

export const importOutput = z.object({
  id: z.string(),
  status: z.enum(IMPORT_STATUSES),
  mode: z.enum(BULK_UPSERT_MODES),
  format: z.enum(['csv', 'xlsx']),
  progress: z.object({
    rows_total: z.int().describe('data rows of the file (the header is row 1)'),
    rows_processed: z.int().describe('rows applied or refused so far'),
  }),
  summary: z.object({ created: z.int(), updated: z.int(), unchanged: z.int(), error: z.int() }),
  results: z
    .array(
      z.object({
        row: z.int(),
        status: z.enum(['created', 'updated', 'unchanged', 'error']),
        product_id: z.string().optional(),
      }),
    )
    .describe('each row processed so far, in file order'),
  errors: z.array(rowErrorOutput).describe('each bad cell or refused row: row number, column, message'),
  failure: z.string().optional().describe('failed: why the import stopped'),
  created_at: z.string(),
  finished_at: z.string().optional(),
});
export type ImportAnswer = z.output<typeof importOutput>;

export const importAnswerOf = (view: ImportView): ImportAnswer => {
  const count = (status: string) => view.results.filter((result) => result.status === status).length;
  return {
    id: view.id,
    status: view.status,
    mode: view.mode,
    format: view.format,
    progress: { rows_total: view.rowsTotal, rows_processed: view.rowsProcessed },
    summary: {
      created: count('created'),
      updated: count('updated'),
      unchanged: count('unchanged'),
      error: count('error'),
    },
    results: view.results.map(({ row, status, productId }) =>
      productId === undefined ? { row, status } : { row, status, product_id: productId },
    ),
    errors: view.results.flatMap((result) => result.errors),
    ...(view.failure === undefined ? {} : { failure: view.failure }),
    created_at: new Date(view.createdAtMs).toISOString(),
    ...(view.finishedAtMs === undefined ? {} : { finished_at: new Date(view.finishedAtMs).toISOString() }),
  };
};

const formatOf = (contentType: string | undefined): ImportFormat | undefined => {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return (Object.keys(IMPORT_CONTENT_TYPES) as ImportFormat[]).find(
    (format) => IMPORT_CONTENT_TYPES[format] === type,
  );
};

/**
 * The file's rows as stored: the valid ones with their bodies (the worker plans them into chunks); rows with bad
 * cells (or text PostgreSQL cannot store) are refused here with their errors.
 */
export const storedRowsOf = (importRows: readonly ImportRow[]): StoredImportRow[] => {
  const rows = importRows.map((row): StoredImportRow => {
    if ('errors' in row) return row;
    const unstorable = unstorableTextViolations(row.body);
    if (unstorable.length > 0) {
      return {
        row: row.row,
        errors: unstorable.map(({ path, message }) => ({
          row: row.row,
          column: path.split('/')[0] ?? path,
          message,
        })),
      };
    }
    return { row: row.row, body: row.body };
  });
  if (rows.length === 0) {
    throw validationError('invalid import file', [
      { path: 'file', message: 'has no data rows under its header' },
    ]);
  }
  return rows;
};

/** Spreadsheet and CSV imports (docs/imports.md; docs/specification.md, "Imports"). */
export const importsRoutes = (
  problems: Problems,
  identity: IdentityService,
  imports: ListingImports | undefined,
  publicBaseUrl: string,
): Router => {
  const router = Router();
  const available = (): ListingImports => {
    if (imports === undefined) throw unavailable('this gateway runs no listing imports');
    return imports;
  };
  router
    .route('/api/products/imports')
    .post(
      authenticate(identity, { required: true }),
      (req, res, next) => {
        if (formatOf(req.get('content-type')) === undefined) {
          throw new HttpProblem(
            'unsupported-media-type',
            `send the file as ${IMPORT_CONTENT_TYPES.csv} or ${IMPORT_CONTENT_TYPES.xlsx}`,
          );
        }
        // A malformed key is refused before a file of up to 20 MiB is read; a well-formed one is echoed.
        idempotencyKeyOf(req, res);
        next();
      },
      express.raw({ type: Object.values(IMPORT_CONTENT_TYPES), limit: IMPORT_BODY_LIMIT_BYTES }),
      async (req, res) => {
        const seller = requireSeller(authenticatedPrincipalOf(req), 'import listings');
        const { mode } = parseOrThrow(importQuerySchema, req.query, 'import query');
        const format = formatOf(req.get('content-type')) as ImportFormat;
        const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const { store, wake } = available();
        const sellerAccountId = seller.accountId;
        const key = req.get(IDEMPOTENCY_KEY_HEADER);
        const idempotency =
          key === undefined
            ? undefined
            : await importKeyOf(key, { sellerAccountId, mode, format, file: bytes });
        const upload = async (): Promise<UploadedImport> => {
          const rows = storedRowsOf(await readImportRows(format, bytes));
          return store.create({ id: randomUUID(), sellerAccountId, mode, format, rows, idempotency });
        };
        // The import a key holds is answered again without reading its file a second time (docs/imports.md).
        const uploaded =
          idempotency === undefined
            ? await upload()
            : replayOf(
                (await store.findByKey(sellerAccountId, idempotency.key)) ?? (await upload()),
                idempotency,
              );
        wake();
        const location = `${publicBaseUrl}/api/products/imports/${uploaded.id}`;
        res
          .status(202)
          .set('Location', location)
          .json({ id: uploaded.id, status: 'queued', rows_total: uploaded.rowsTotal, location });
      },
    )
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/products/imports/:importId')
    .get(authenticate(identity, { required: true }), async (req, res) => {
      const seller = requireSeller(authenticatedPrincipalOf(req), 'read imports');
      const parsed = importIdSchema.safeParse(req.params);
      // Another seller's import is as absent as a missing one: its id says nothing.
      const view = parsed.success
        ? await available().store.find(seller.accountId, parsed.data.importId)
        : undefined;
      if (view === undefined) throw notFound(`import ${String(req.params.importId)} does not exist`);
      res.json(importAnswerOf(view));
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};

export const importsRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/products/imports',
    operationId: 'importListings',
    summary: 'Import a CSV or XLSX file of listings; applied in the background',
    description:
      'The body is the file itself (text/csv, or an XLSX workbook whose first sheet is read), at most 20 MiB ' +
      'and 50,000 rows. The header row names the columns: the fields of POST /api/products, price in dollars ' +
      '(docs/imports.md has the template and a sample). A column the template does not know is a 400 naming ' +
      'it. An empty cell sends no field, so an update keeps the stored value. Rows are applied in chunks of ' +
      '250 through the bulk upsert (mode upsert_by_sku by default). Answers 202 with the import id and its ' +
      'Location; GET it for progress and per-row results. With an Idempotency-Key, the same file and mode sent ' +
      'again answer the same 202 (same id) and import nothing twice, while the first is queued, running or done.',
    tags: ['listings'],
    auth: 'api_key',
    idempotencyKey: true,
    query: importQuerySchema,
    fileBody: Object.values(IMPORT_CONTENT_TYPES),
    responses: {
      202: {
        description: 'The import is queued',
        schema: z.object({
          id: z.string(),
          status: z.literal('queued'),
          rows_total: z.int(),
          location: z.string(),
        }),
      },
      400: 'An unreadable file, no header row, unknown or repeated columns, no data rows, a bad mode or a malformed Idempotency-Key',
      401: 'No valid key',
      403: 'Not a seller key',
      413: 'The file is over 20 MiB',
      415: 'Neither text/csv nor the XLSX media type',
    },
  },
  {
    method: 'get',
    path: '/api/products/imports/{importId}',
    operationId: 'getListingImport',
    summary: 'An import of yours: status, progress, then per-row results and errors',
    description:
      'status is queued, running, done or failed; progress counts the data rows processed. results hold each ' +
      'row processed so far (its listing when created, updated or unchanged) and errors each bad cell or ' +
      'refused row by row number (the header is row 1), column and message. Another seller’s import is a 404.',
    tags: ['listings'],
    auth: 'api_key',
    pathParameters: z.object({ importId: z.string().describe('the id POST answered') }),
    responses: {
      200: { description: 'The import as it stands', schema: importOutput },
      401: 'No valid key',
      403: 'Not a seller key',
      404: 'No import of yours has this id',
    },
  },
];
