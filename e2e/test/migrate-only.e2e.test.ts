import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { repoRoot } from '../src/harness/processes.js';

const SERVER_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs a compiled service main to its end; resolves to its exit code and output. */
const runToExit = async (
  service: string,
  env: Record<string, string>,
): Promise<{ code: number; logs: string }> => {
  const child = spawn(process.execPath, [join(repoRoot, `services/${service}/dist/src/main.js`)], {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout.on('data', (chunk: Buffer) => (logs += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (logs += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(killer);
  return { code: code ?? -1, logs };
};

/**
 * The chart's migrations Job runs each service's image with MIGRATE_ONLY=true before the new version's pods
 * start: the process must apply the service's schema and exit 0 by itself, without a signal.
 */
describe('MIGRATE_ONLY (the chart migrations Job)', () => {
  const databaseName = `migrate_${randomBytes(4).toString('hex')}`;
  const databaseUrl = new URL(SERVER_URL);
  databaseUrl.pathname = `/${databaseName}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${databaseName}`);
  });

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    await admin.end();
  });

  // One service suffices: the mode lives in runServiceMain, which every service's main uses.
  it('listing applies its migrations and exits 0 by itself', async () => {
    const schema = 'listing';
    const { code, logs } = await runToExit('listing', {
      MIGRATE_ONLY: 'true',
      INTERNAL_AUTH_KEY: randomBytes(32).toString('base64url'),
      DATABASE_URL: databaseUrl.toString(),
      EVENT_LOG: 'nats',
      NATS_URL: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
      EVENT_LOG_NAMESPACE: `migrate-${databaseName}`,
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      HOST: '127.0.0.1',
      PORT: '0',
    });
    expect({ code, logs }).toMatchObject({ code: 0, logs: expect.stringContaining('MIGRATE_ONLY') });
    const db = new pg.Client({ connectionString: databaseUrl.toString() });
    await db.connect();
    try {
      const { rows } = await db.query<{ tables: string }>(
        'select count(*) as tables from information_schema.tables where table_schema = $1',
        [schema],
      );
      expect(Number(rows[0]!.tables)).toBeGreaterThan(0);
    } finally {
      await db.end();
    }
  }, 60_000);
});
