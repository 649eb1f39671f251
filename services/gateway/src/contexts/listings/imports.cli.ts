import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseArgs } from 'node:util';
import { idempotencyKeyProblem } from '@marketplace/eventsourcing';
import { DEFAULT_PUBLIC_BASE_URL } from '@marketplace/platform';
import { BULK_UPSERT_MODES } from '@marketplace/vocabulary';
import { callMarketplace, describeRefusal } from '../../edge/cli/marketplace-http.js';
import type { ImportAnswer } from './imports.routes.js';
import { IMPORT_CONTENT_TYPES } from './imports/import-file.js';

export const IMPORT_USAGE = `usage: marketplace listings import FILE [--mode upsert_by_sku|create] [--idempotency-key KEY]
Uploads a CSV (.csv) or XLSX (.xlsx) file of listings to POST /api/products/imports (docs/imports.md), shows
its progress, then prints the summary and the first errors. Needs SELLER_KEY (a seller's API key) and
MARKETPLACE_URL (default http://localhost:8080). With --idempotency-key, running the command again with the
same key, file and mode (after an upload whose answer never came) follows the first import instead of
starting another.
`;

export interface ImportCliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stderr: { write(text: string): unknown };
  /** Injected by tests; the global fetch otherwise. */
  readonly fetch?: typeof fetch;
  /** How long to wait between polls; tests pass 0. */
  readonly pollMs?: number;
}

const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
const FIRST_ERRORS = 10;
const BAR_WIDTH = 30;

/** `[#######.....]  4,000/10,000 rows` */
export const progressBar = (processed: number, total: number): string => {
  const filled = total === 0 ? BAR_WIDTH : Math.round((processed / total) * BAR_WIDTH);
  const count = (n: number) => n.toLocaleString('en-US');
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${count(processed)}/${count(total)} rows`;
};

export const summaryOf = (answer: ImportAnswer): string => {
  const { created, updated, unchanged, error } = answer.summary;
  const lines = [
    `import ${answer.id}: ${answer.status}`,
    `created ${created}, updated ${updated}, unchanged ${unchanged}, errors ${error}`,
    ...(answer.failure === undefined ? [] : [`failure: ${answer.failure}`]),
    ...answer.errors
      .slice(0, FIRST_ERRORS)
      .map(({ row, column, message }) => `  row ${row}${column ? `, ${column}` : ''}: ${message}`),
    ...(answer.errors.length > FIRST_ERRORS
      ? [`  … and ${answer.errors.length - FIRST_ERRORS} more: GET /api/products/imports/${answer.id}`]
      : []),
  ];
  return `${lines.join('\n')}\n`;
};

class Refused extends Error {}

/** `marketplace listings import FILE` (docs/imports.md). Resolves to the exit status. */
export const runImportCli = async (argv: readonly string[], io: ImportCliIo): Promise<number> => {
  let file: string;
  let mode: string;
  let idempotencyKey: string | undefined;
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: {
        mode: { type: 'string', default: 'upsert_by_sku' },
        'idempotency-key': { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
    const [only, ...more] = positionals;
    if (only === undefined || more.length > 0) throw new Error('name exactly one FILE');
    if (!(BULK_UPSERT_MODES as readonly string[]).includes(values.mode)) {
      throw new Error(`--mode must be one of ${BULK_UPSERT_MODES.join(', ')}`);
    }
    idempotencyKey = values['idempotency-key'];
    // fetch cannot send every malformed key as a header; the marketplace's own rule says what is wrong first.
    const problem = idempotencyKey === undefined ? undefined : idempotencyKeyProblem(idempotencyKey);
    if (problem !== undefined) throw new Error(`--idempotency-key ${problem}`);
    file = only;
    mode = values.mode;
  } catch (error) {
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n${IMPORT_USAGE}`);
    return EXIT.usage;
  }
  const format = extname(file).toLowerCase().slice(1);
  if (format !== 'csv' && format !== 'xlsx') {
    io.stderr.write(`error: ${file} is neither .csv nor .xlsx\n`);
    return EXIT.usage;
  }
  const apiKey = io.env['SELLER_KEY'];
  if (!apiKey) {
    io.stderr.write('error: SELLER_KEY is not set; it must be a seller’s API key\n');
    return EXIT.usage;
  }
  const baseUrl = io.env['MARKETPLACE_URL'] || DEFAULT_PUBLIC_BASE_URL;
  if (!URL.canParse(baseUrl)) {
    io.stderr.write(`error: MARKETPLACE_URL is not a URL: ${baseUrl}\n`);
    return EXIT.usage;
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    io.stderr.write(
      `error: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return EXIT.usage;
  }
  const call = async (url: URL, init: RequestInit): Promise<unknown> => {
    const outcome = await callMarketplace(
      url,
      { ...init, headers: { ...init.headers, 'x-mcp-api-key': apiKey } },
      io.fetch,
    );
    if (!outcome.reached) throw new Refused(outcome.message);
    if (outcome.status >= 300) throw new Refused(describeRefusal(url, outcome.status, outcome.text));
    try {
      return JSON.parse(outcome.text);
    } catch {
      // Something else listens at MARKETPLACE_URL (a web page answers 200 too).
      throw new Refused(
        `${url.href} answered ${outcome.status} with no JSON: is MARKETPLACE_URL the marketplace?`,
      );
    }
  };
  try {
    const url = new URL(`/api/products/imports?mode=${mode}`, baseUrl);
    const started = (await call(url, {
      method: 'POST',
      headers: {
        'content-type': IMPORT_CONTENT_TYPES[format],
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: new Uint8Array(bytes),
    })) as { id: string; location: string };
    io.stdout.write(`import ${started.id} queued\n`);
    const importUrl = new URL(`/api/products/imports/${started.id}`, baseUrl);
    let shown = '';
    for (;;) {
      const answer = (await call(importUrl, { method: 'GET' })) as ImportAnswer;
      const bar = progressBar(answer.progress.rows_processed, answer.progress.rows_total);
      if (bar !== shown) {
        // On a terminal the bar redraws in place; in a log, each change is a line.
        io.stdout.write(io.stdout.isTTY === true ? `\r${bar}` : `${bar}\n`);
        shown = bar;
      }
      if (answer.status === 'done' || answer.status === 'failed') {
        io.stdout.write(`${io.stdout.isTTY === true ? '\n' : ''}${summaryOf(answer)}`);
        return answer.status === 'done' ? EXIT.ok : EXIT.failed;
      }
      await new Promise((resolve) => setTimeout(resolve, io.pollMs ?? 1_000));
    }
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    io.stderr.write(`error: ${error.message}\n`);
    return EXIT.failed;
  }
};
