import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { crc32, deflateRawSync } from 'node:zlib';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import { OwnDatabase } from '../src/harness/own-database.js';
import { eventually } from '../src/harness/processes.js';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** A zip archive of deflated parts, as an XLSX file is one (no more of the format than the test needs). */
const zipOf = (parts: Record<string, Buffer>): Buffer => {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of Object.entries(parts)) {
    const deflated = deflateRawSync(data, { level: 9 });
    const fileName = Buffer.from(name);
    const sizes = (header: Buffer, at: number) => {
      header.writeUInt16LE(8, at); // deflated
      header.writeUInt32LE(crc32(data), at + 6);
      header.writeUInt32LE(deflated.length, at + 10);
      header.writeUInt32LE(data.length, at + 14);
      header.writeUInt16LE(fileName.length, at + 18);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    sizes(local, 8);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    sizes(central, 10);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, deflated);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + deflated.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(parts).length, 8);
  end.writeUInt16LE(Object.keys(parts).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
};

/**
 * A hostile seller's files through the gateway of `pnpm start` (docs/imports.md, "Reading the file"): each is a
 * 400 naming the file or a column, or an error of its row, and never a 5xx, a hang or gigabytes of memory.
 */
describe('hostile listing imports (embedded mode on PostgreSQL)', () => {
  let ownDatabase: OwnDatabase | undefined;
  let marketplace: EmbeddedMarketplace;
  let apiKey: string;

  const upload = (type: string, body: Buffer | string) =>
    marketplace.client.request('/api/products/imports', {
      method: 'POST',
      headers: { 'x-mcp-api-key': apiKey, 'content-type': type },
      body,
      signal: AbortSignal.timeout(30_000),
    });

  beforeAll(async () => {
    ownDatabase = await OwnDatabase.create(`e2e_imports_hostile_${randomBytes(4).toString('hex')}`);
    marketplace = await EmbeddedMarketplace.start({ env: { DATABASE_URL: ownDatabase.url } });
    ({ apiKey } = await marketplace.client.createAccount('seller', 'Hostile Import Seller'));
  }, 120_000);

  afterAll(async () => {
    await marketplace?.stop();
    await ownDatabase?.drop();
  });

  const finished = (location: string) =>
    eventually(
      async () => {
        const { body } = await marketplace.client.request(new URL(location).pathname, {
          headers: { 'x-mcp-api-key': apiKey },
        });
        const read = body as { status: string; errors: unknown[]; summary: unknown };
        return read.status === 'done' ? read : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, describe: () => `import ${location} done` },
    );

  it('refuses an XLSX file of 300 KB that inflates to 300 MB before parsing it', async () => {
    const bomb = zipOf({ 'xl/worksheets/sheet1.xml': Buffer.alloc(300 * 1024 * 1024, ' ') });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const { status, body } = await upload(XLSX_TYPE, bomb);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      errors: [{ path: 'file', message: expect.stringContaining('inflates to more than 256 MiB') }],
    });
  }, 60_000);

  it('names 20 problems of a header of five million columns in a JSON answer', async () => {
    const { status, body } = await upload('text/csv', `name,description${',x'.repeat(5_000_000)}\n`);
    expect(status).toBe(400);
    expect((body as { errors: unknown[] }).errors).toHaveLength(21);
  }, 60_000);

  it('refuses a CSV that is not UTF-8, and makes a decimal comma an error of its row', async () => {
    const latin1 = await upload('text/csv', Buffer.from('name,description\nCafé chairs,desc\n', 'latin1'));
    expect(latin1).toMatchObject({ status: 400, body: { errors: [{ path: 'file' }] } });

    const started = await upload(
      'text/csv',
      'name,description,sku,price\r\nLamps,Boxed,H-1,"19,99"\r\nChairs,Boxed,H-2,19.99\r',
    );
    expect(started.status).toBe(202);
    const answer = await finished(started.headers.get('location') ?? '');
    expect(answer.summary).toEqual({ created: 1, updated: 0, unchanged: 0, error: 1 });
    expect(answer.errors).toEqual([{ row: 2, column: 'price', message: 'must be a number, not "19,99"' }]);
  }, 60_000);

  it('takes the same upload again as another import: by sku, its rows are unchanged, with or without a key', async () => {
    const csv = 'sku,name,description,price\nRE-1,Boxed kettles,Returns,12\nRE-2,Boxed toasters,Returns,14\n';
    const first = await upload('text/csv', csv);
    expect((await finished(first.headers.get('location') ?? '')).summary).toMatchObject({ created: 2 });
    const again = await marketplace.client.request('/api/products/imports', {
      method: 'POST',
      headers: { 'x-mcp-api-key': apiKey, 'content-type': 'text/csv', 'idempotency-key': 'same-upload' },
      body: csv,
    });
    expect(again.status).toBe(202);
    expect((again.body as { id: string }).id).not.toBe((first.body as { id: string }).id);
    expect((await finished(again.headers.get('location') ?? '')).summary).toEqual({
      created: 0,
      updated: 0,
      unchanged: 2,
      error: 0,
    });
  }, 60_000);
});
