import { describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { progressBar, runImportCli } from '../src/contexts/listings/imports.cli.js';

const ID = '6f1c2a8e-4d4b-4c52-9a53-0d3f3f7d1c11';

const answer = (status: string, processed: number) => ({
  id: ID,
  status,
  mode: 'upsert_by_sku',
  format: 'csv',
  progress: { rows_total: 3, rows_processed: processed },
  summary: { created: 1, updated: 1, unchanged: 0, error: status === 'done' ? 1 : 0 },
  results: [],
  errors: status === 'done' ? [{ row: 4, column: 'price', message: 'must be a number, not "ten"' }] : [],
  created_at: '2026-11-26T23:00:00.000Z',
});

const run = async (
  argv: string[],
  replies: { status: number; body: unknown }[],
  env: Record<string, string> = { SELLER_KEY: 'sk_1' },
) => {
  const calls: {
    url: string;
    method: string;
    type: string | null;
    key: string | null;
    idempotencyKey: string | null;
  }[] = [];
  let out = '';
  let err = '';
  const code = await runImportCli(argv, {
    env: { MARKETPLACE_URL: 'http://marketplace.test', ...env },
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    pollMs: 0,
    fetch: async (url, init) => {
      const headers = new Headers(init?.headers);
      calls.push({
        url: url instanceof URL ? url.href : typeof url === 'string' ? url : url.url,
        method: init?.method ?? 'GET',
        type: headers.get('content-type'),
        key: headers.get('x-mcp-api-key'),
        idempotencyKey: headers.get('idempotency-key'),
      });
      const reply = replies.shift() ?? { status: 500, body: {} };
      const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      return new Response(text, { status: reply.status });
    },
  });
  return { code, out, err, calls };
};

describe('marketplace listings import', () => {
  it('draws a progress bar', () => {
    expect(progressBar(1_500, 10_000)).toBe(`[${'#'.repeat(5)}${'.'.repeat(25)}] 1,500/10,000 rows`);
  });

  it('uploads the file as its media type, polls until done, prints the summary and the first errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'import-cli-'));
    const file = join(dir, 'lots.csv');
    await writeFile(file, 'name,description,price\nA,B,1\n');
    const { code, out, calls } = await run(
      [file, '--mode', 'create'],
      [
        {
          status: 202,
          body: { id: ID, status: 'queued', rows_total: 3, location: `/api/products/imports/${ID}` },
        },
        { status: 200, body: answer('running', 1) },
        { status: 200, body: answer('done', 3) },
      ],
    );
    expect(code).toBe(0);
    expect(calls[0]).toEqual({
      url: 'http://marketplace.test/api/products/imports?mode=create',
      method: 'POST',
      type: 'text/csv',
      key: 'sk_1',
      idempotencyKey: null,
    });
    expect(calls.slice(1).map((call) => call.url)).toEqual([
      `http://marketplace.test/api/products/imports/${ID}`,
      `http://marketplace.test/api/products/imports/${ID}`,
    ]);
    expect(out).toContain('1/3 rows');
    expect(out).toContain('created 1, updated 1, unchanged 0, errors 1');
    expect(out).toContain('row 4, price: must be a number, not "ten"');
  });

  it('sends --idempotency-key as the upload’s Idempotency-Key, and refuses a malformed one before uploading', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'import-cli-'));
    const file = join(dir, 'lots.csv');
    await writeFile(file, 'name,description,price\nA,B,1\n');
    const queued = { id: ID, status: 'queued', rows_total: 3, location: `/api/products/imports/${ID}` };
    const keyed = await run(
      [file, '--idempotency-key', 'lots-2026-11-27'],
      [
        { status: 202, body: queued },
        { status: 200, body: answer('done', 3) },
      ],
    );
    expect(keyed.code).toBe(0);
    expect(keyed.calls.map((call) => [call.method, call.idempotencyKey])).toEqual([
      ['POST', 'lots-2026-11-27'],
      ['GET', null],
    ]);
    const malformed = await run([file, '--idempotency-key', 'lots\t1'], []);
    expect(malformed).toMatchObject({
      code: 2,
      calls: [],
      err: expect.stringContaining('--idempotency-key must be printable ASCII'),
    });
  });

  it('says what is wrong: no key, another file type, a refused upload', async () => {
    expect((await run(['lots.csv'], [], {})).err).toContain('SELLER_KEY is not set');
    expect((await run(['lots.json'], [])).code).toBe(2);
    const dir = await mkdtemp(join(tmpdir(), 'import-cli-'));
    const file = join(dir, 'lots.csv');
    await writeFile(file, 'name,prce\n');
    const refused = await run(
      [file],
      [
        {
          status: 400,
          body: {
            title: 'Bad Request',
            detail: 'invalid import file header',
            errors: [{ path: 'columns.B', message: '"prce" is not a template column' }],
          },
        },
      ],
    );
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('columns.B: "prce" is not a template column');
  });

  it('answers a missing file, a directory, a bad MARKETPLACE_URL or a page that is no marketplace in one line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'import-cli-'));
    const missing = await run([join(dir, 'missing.csv')], []);
    expect(missing).toMatchObject({ code: 2, err: expect.stringContaining('cannot read') });
    const folder = join(dir, 'folder.csv');
    await mkdir(folder);
    expect(await run([folder], [])).toMatchObject({ code: 2, err: expect.stringContaining('EISDIR') });
    const file = join(dir, 'lots.csv');
    await writeFile(file, 'name,description\nA,B\n');
    const badUrl = await run([file], [], { SELLER_KEY: 'sk_1', MARKETPLACE_URL: 'not-a-url' });
    expect(badUrl).toMatchObject({ code: 2, err: 'error: MARKETPLACE_URL is not a URL: not-a-url\n' });
    const page = await run([file], [{ status: 200, body: '<html>hello</html>' }]);
    expect(page).toMatchObject({ code: 1, err: expect.stringContaining('answered 200 with no JSON') });
  });
});
