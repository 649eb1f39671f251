import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createServer, connect, type AddressInfo, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresDatabase, isConnectionFailure, waitForDatabase, type Database } from '../src/index.js';
import { TEST_DATABASE_URL, freshSchemaName, contractTestEngines } from '../src/testing/index.js';
import { describeDatabaseContract, latch, within } from './database.contract.js';

// The preset's testTimeout does not apply when jest runs all projects from the root.
jest.setTimeout(30_000);

describeDatabaseContract(contractTestEngines().find((engine) => engine.name === 'postgres')!);

const pgServer = new URL(TEST_DATABASE_URL);

/** A loopback port nobody listens on. */
const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
};

const urlOnPort = (port: number): string => {
  const url = new URL(TEST_DATABASE_URL);
  url.host = `127.0.0.1:${port}`;
  return url.toString();
};

describe('the pg adapter', () => {
  let db: Database;
  let admin: Database;
  const applicationName = freshSchemaName('pg_adapter');

  beforeAll(async () => {
    db = createPostgresDatabase({ url: TEST_DATABASE_URL, poolSize: 4, applicationName });
    admin = createPostgresDatabase({
      url: TEST_DATABASE_URL,
      poolSize: 2,
      applicationName: `${applicationName}_admin`,
    });
    await waitForDatabase(db, { timeoutMs: 10_000 });
  });

  afterAll(async () => {
    await db.close();
    await admin.close();
  });

  it('runs transactions concurrently, each on its own connection', async () => {
    const bothStarted = [latch(), latch()] as const;
    const run = (mine: 0 | 1) =>
      db.transaction(async (tx) => {
        await tx.query('select 1');
        bothStarted[mine].open();
        // Serialized transactions would wait here forever: the other one could not start.
        await within(bothStarted[mine === 0 ? 1 : 0].promise, 5_000, 'the other transaction');
        return (await tx.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      });
    const [first, second] = await Promise.all([run(0), run(1)]);
    expect(first).not.toBe(second);
  });

  it('prepares a parameterized statement once per connection, then only binds and executes it', async () => {
    const sql = `select $1::int + 1 as next /* ${applicationName} */`;
    const prepared = await db.transaction(async (tx) => {
      for (const n of [1, 2, 3])
        expect((await tx.query<{ next: number }>(sql, [n])).rows).toEqual([{ next: n + 1 }]);
      // The transaction keeps one connection: its prepared statements are the ones this session holds.
      return (
        await tx.query<{ calls: string }>(
          'select count(*) as calls from pg_prepared_statements where statement = $1 and not from_sql',
          [sql],
        )
      ).rows[0]?.calls;
    });
    expect(prepared).toBe('1');
    // A script (no parameters) still runs through the simple protocol.
    expect((await db.query('select 1 as a; select 2 as b')).rows).toEqual([{ b: 2 }]);
  });

  it('excludes a holder in another process (another pool) from an advisory lock', async () => {
    const key = freshSchemaName('lock');
    const release = latch();
    const acquired = latch();
    const holder = db.withAdvisoryLock(key, async () => {
      acquired.open();
      await release.promise;
    });
    await acquired.promise;
    expect(await admin.withAdvisoryLock(key, async () => 'stolen')).toBeUndefined();
    release.open();
    await holder;
    expect(await admin.withAdvisoryLock(key, async () => 'taken over')).toBe('taken over');
  });

  it('tells the work it lost the advisory lock when the session holding it dies', async () => {
    const key = freshSchemaName('lock');
    const acquired = latch();
    const leader = db.withAdvisoryLock(key, async (lockLost) => {
      acquired.open();
      await within(new Promise((resolve) => lockLost.addEventListener('abort', resolve)), 5_000, 'lock loss');
      return 'stepped down';
    });
    await acquired.promise;
    await admin.query(
      `select pg_terminate_backend(pid) from pg_locks
        where locktype = 'advisory' and objsubid = 1
          and ((classid::int8 << 32) | objid::int8) = hashtextextended($1, 0)`,
      [key],
    );
    expect(await leader).toBe('stepped down');
    // The terminated backend releases its locks as it exits, which can be just after the client saw the loss.
    expect(
      await admin.withAdvisoryLock(key, async () => 'new leader', { wait: true, timeoutMs: 5_000 }),
    ).toBe('new leader');
  });

  it('re-LISTENs after its listening connection is lost', async () => {
    const channel = freshSchemaName('ch');
    const received: string[] = [];
    const stop = await db.listen(channel, (payload) => received.push(payload));
    const terminated = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [`${applicationName} listen`],
    );
    expect(terminated.rowCount).toBe(1);
    // Notifications sent while it reconnects are lost (they are hints); keep sending until one arrives.
    const giveUpAt = Date.now() + 10_000;
    while (received.length === 0 && Date.now() < giveUpAt) {
      await db.query('select pg_notify($1, $2)', [channel, 'after reconnect']);
      await sleep(100);
    }
    expect(received[0]).toBe('after reconnect');
    await stop();
  });

  it('tells a running leader to stop when the database closes', async () => {
    const own = createPostgresDatabase({ url: TEST_DATABASE_URL, poolSize: 2, applicationName });
    const acquired = latch();
    const leader = own.withAdvisoryLock(freshSchemaName('lock'), async (lockLost) => {
      acquired.open();
      await new Promise((resolve) => lockLost.addEventListener('abort', resolve));
      return 'stopped';
    });
    await acquired.promise;
    await within(own.close(), 5_000, 'close');
    expect(await leader).toBe('stopped');
  });

  it('reports a connection terminated mid-transaction as unavailable (a transient failure), then works again', async () => {
    const failed = db.transaction(async (tx) => {
      await tx.query('select 1');
      // What the fault runs do: the server ends this backend while the transaction is open.
      await admin.query('select pg_terminate_backend($1)', [
        (await tx.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid,
      ]);
      await tx.query('select 2');
    });
    const error: unknown = await failed.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AppError', kind: 'unavailable' });
    // 57P01 (admin_shutdown), or node-postgres' own words when the socket closed first.
    expect(isConnectionFailure((error as Error).cause)).toBe(true);
    await expect(db.transaction((tx) => tx.query('select 1 as ok'))).resolves.toMatchObject({
      rows: [{ ok: 1 }],
    });
  });

  it('refuses a pool too small for an advisory lock holder and its work, and a URL that is not postgres://', () => {
    expect(() => createPostgresDatabase({ url: TEST_DATABASE_URL, poolSize: 1 })).toThrow('poolSize');
    expect(() => createPostgresDatabase({ url: 'mysql://127.0.0.1/db' })).toThrow(
      'postgres:// or postgresql://',
    );
    expect(() => createPostgresDatabase({ url: '127.0.0.1:5432' })).toThrow('postgres:// or postgresql://');
  });
});

describe('waitForDatabase against the pg adapter', () => {
  it('gives up with a clear error after its timeout when nothing listens', async () => {
    const unreachable = createPostgresDatabase({ url: urlOnPort(await closedPort()), connectTimeoutMs: 500 });
    const startedAt = Date.now();
    try {
      await expect(waitForDatabase(unreachable, { timeoutMs: 1_000 })).rejects.toThrow(
        /did not answer within 1000 ms; last failure: .*ECONNREFUSED/,
      );
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(950);
      expect(Date.now() - startedAt).toBeLessThan(3_000);
    } finally {
      await unreachable.close();
    }
  });

  it('waits for a server that comes up late', async () => {
    const port = await closedPort();
    const late = createPostgresDatabase({ url: urlOnPort(port), connectTimeoutMs: 500 });
    // A loopback proxy to the real server that starts listening only after a while.
    let proxy: Server | undefined;
    const opening = sleep(700).then(
      () =>
        new Promise<void>((resolve) => {
          proxy = createServer((socket) => {
            const upstream = connect(Number(pgServer.port || 5432), pgServer.hostname);
            socket.pipe(upstream).pipe(socket);
            socket.on('error', () => upstream.destroy());
            upstream.on('error', () => socket.destroy());
          }).listen(port, '127.0.0.1', resolve);
        }),
    );
    try {
      await waitForDatabase(late, { timeoutMs: 10_000 });
      await expect(late.query('select 1 as ok')).resolves.toMatchObject({ rows: [{ ok: 1 }] });
    } finally {
      await opening;
      await late.close();
      await new Promise((resolve) => proxy?.close(resolve));
    }
  });
});
