import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AdvisoryLockTimeoutError,
  PG_UNIQUE_VIOLATION,
  migrate,
  quoteIdent,
  sqlStateOf,
  waitForDatabase,
  type Database,
  type Migration,
} from '../src/index.js';
import {
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  dropSchema,
  freshSchemaName,
  type TestEngine,
} from '../src/testing/index.js';

/** Rejects when `promise` has not settled within `ms`, so a missing notification fails fast and clearly. */
export const within = async <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
  const timeout = new AbortController();
  try {
    return await Promise.race([
      promise,
      sleep(ms, undefined, { signal: timeout.signal }).then(() => {
        throw new Error(`${what}: nothing within ${ms} ms`);
      }),
    ]);
  } finally {
    timeout.abort();
  }
};

/** A promise with its resolve function, for holding work open until the test lets it go. */
export const latch = (): { promise: Promise<void>; open: () => void } => {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
};

/** Collects the payloads of one channel; `next()` waits for the next one not yet taken. */
const collect = async (db: Database, channel: string) => {
  const received: string[] = [];
  const waiting: Array<() => void> = [];
  const stop = await db.listen(channel, (payload) => {
    received.push(payload);
    waiting.shift()?.();
  });
  let taken = 0;
  return {
    stop,
    async next(): Promise<string> {
      if (received.length <= taken) {
        await within(
          new Promise<void>((resolve) => waiting.push(resolve)),
          5_000,
          `notification on ${channel}`,
        );
      }
      return received[taken++]!;
    },
    received,
  };
};

/** The behaviour every adapter of the Database port shares; each adapter's int test runs it. */
export const describeDatabaseContract = (engine: TestEngine): void => {
  describe(`Database contract on ${engine.name}`, () => {
    const schema = freshSchemaName('db_contract');
    const items = `${quoteIdent(schema)}.items`;
    let db: Database;

    beforeAll(async () => {
      db = await engine.create();
      await db.query(`create schema ${quoteIdent(schema)}`);
      await db.query(`create table ${items} (id int primary key, name text not null unique)`);
    }, TEST_ENGINE_CREATE_TIMEOUT_MS);

    afterAll(async () => {
      await dropSchema(db, schema);
      await db.close();
    });

    it('names its engine', () => {
      expect(db.engine).toBe(engine.name);
    });

    describe('queries', () => {
      it('binds $n parameters', async () => {
        const { rows } = await db.query<{ sum: number; greeting: string; nothing: null }>(
          'select $1::int4 + $2::int4 as sum, $3::text as greeting, $4::text as nothing',
          [2, 3, 'hello', null],
        );
        expect(rows).toEqual([{ sum: 5, greeting: 'hello', nothing: null }]);
      });

      it('counts the rows a statement returned or changed', async () => {
        const inserted = await db.query(
          `insert into ${items} (id, name) values (101, 'a'), (102, 'b'), (103, 'c')`,
        );
        expect(inserted.rowCount).toBe(3);
        const updated = await db.query(
          `update ${items} set name = name || '!' where id in ($1, $2)`,
          [101, 102],
        );
        expect(updated.rowCount).toBe(2);
        const selected = await db.query(`select id from ${items} where id > $1 order by id`, [100]);
        expect(selected.rowCount).toBe(3);
        const deleted = await db.query(`delete from ${items} where id > 100`);
        expect(deleted.rowCount).toBe(3);
      });

      it('runs a parameterless multi-statement script and answers its last statement', async () => {
        const { rows } = await db.query(`create temporary table script_probe (n int); select 7 as n`);
        expect(rows).toEqual([{ n: 7 }]);
      });

      it('surfaces a unique violation as SQLSTATE 23505', async () => {
        await db.query(`insert into ${items} (id, name) values (201, 'unique-201')`);
        const error = await db
          .query(`insert into ${items} (id, name) values (202, 'unique-201')`)
          .catch((e: unknown) => e);
        expect(sqlStateOf(error)).toBe(PG_UNIQUE_VIOLATION);
        // The driver's fields too: callers name the constraint in their answers.
        expect(error).toBeInstanceOf(Error);
        expect(error).toMatchObject({ constraint: 'items_name_key', table: 'items', schema });
        const inTx = await db
          .transaction((tx) => tx.query(`insert into ${items} (id, name) values (201, 'other')`))
          .catch((e: unknown) => e);
        expect(sqlStateOf(inTx)).toBe(PG_UNIQUE_VIOLATION);
      });

      it('answers at once to waitForDatabase', async () => {
        await expect(waitForDatabase(db, { timeoutMs: 1_000 })).resolves.toBeUndefined();
      });
    });

    describe('transactions', () => {
      const namesBetween = async (from: number, to: number) =>
        (
          await db.query<{ name: string }>(
            `select name from ${items} where id between $1 and $2 order by id`,
            [from, to],
          )
        ).rows.map((row) => row.name);

      it('commits when work resolves, answering its result', async () => {
        const result = await db.transaction(async (tx) => {
          await tx.query(`insert into ${items} (id, name) values (301, 'committed-1')`);
          await tx.query(`insert into ${items} (id, name) values (302, 'committed-2')`);
          return 'done';
        });
        expect(result).toBe('done');
        expect(await namesBetween(301, 302)).toEqual(['committed-1', 'committed-2']);
      });

      it('rolls back when work throws, rethrowing its error', async () => {
        const failure = new Error('work failed');
        await expect(
          db.transaction(async (tx) => {
            await tx.query(`insert into ${items} (id, name) values (311, 'rolled-back')`);
            throw failure;
          }),
        ).rejects.toBe(failure);
        expect(await namesBetween(311, 311)).toEqual([]);
      });

      it('runs after-commit callbacks once the transaction committed, never after a rollback', async () => {
        const calls: string[] = [];
        await db.transaction(async (tx) => {
          await tx.query(`insert into ${items} (id, name) values (331, 'committed')`);
          db.afterCommit(() => calls.push('committed'));
          calls.push('work done');
        });
        expect(calls).toEqual(['work done', 'committed']);
        await expect(
          db.transaction(async () => {
            db.afterCommit(() => calls.push('rolled back'));
            throw new Error('work failed');
          }),
        ).rejects.toThrow('work failed');
        db.afterCommit(() => calls.push('outside'));
        expect(calls).toEqual(['work done', 'committed', 'outside']);
      });

      it('does not commit when a statement failed even though work caught the error', async () => {
        await expect(
          db.transaction(async (tx) => {
            await tx.query(`insert into ${items} (id, name) values (321, 'before-failure')`);
            await tx.query('select 1 / 0').catch(() => undefined);
          }),
        ).rejects.toThrow();
        expect(await namesBetween(321, 321)).toEqual([]);
      });

      it('runs at the requested isolation level', async () => {
        const level = await db.transaction(
          async (tx) =>
            (
              await tx.query<{ level: string }>('select current_setting($1) as level', [
                'transaction_isolation',
              ])
            ).rows[0]?.level,
          { isolation: 'serializable' },
        );
        expect(level).toBe('serializable');
        await expect(db.transaction(async () => 1, { isolation: 'chaos' as 'serializable' })).rejects.toThrow(
          'unknown isolation level',
        );
      });

      it('refuses the database handle inside work, and the transaction handle after it', async () => {
        let leaked: { query: (sql: string) => Promise<unknown> } | undefined;
        await expect(db.transaction(() => db.query('select 1'))).rejects.toThrow(
          'use the transaction handle',
        );
        await expect(db.transaction(() => db.transaction(async () => 1))).rejects.toThrow(
          'use the transaction handle',
        );
        await expect(db.transaction(() => db.listen('never_listened', () => undefined))).rejects.toThrow(
          'use the transaction handle',
        );
        await db.transaction(async (tx) => {
          leaked = tx;
        });
        await expect(leaked!.query('select 1')).rejects.toThrow();
        await expect(db.query('select 1 as ok')).resolves.toMatchObject({ rows: [{ ok: 1 }] });
      });
    });

    describe('value types', () => {
      it('reads every type the same way on both engines', async () => {
        const { rows } = await db.query(`
          select 9007199254740993::int8 as big, 12.50::numeric as amount, '42'::xid8 as xid,
                 '{"a": [1, true]}'::jsonb as doc, '\\x00ff10'::bytea as bytes,
                 '2024-05-06T07:08:09.123Z'::timestamptz as at, '2024-05-06'::date as day,
                 true as yes, false as no, array['a', 'b"c']::text[] as tags, array[1, 2]::int8[] as bigs,
                 array[1.5]::numeric[] as amounts, 3::int4 as small, 0.25::float8 as ratio`);
        const row = rows[0]!;
        expect(row).toMatchObject({
          big: '9007199254740993',
          amount: '12.50',
          xid: '42',
          doc: { a: [1, true] },
          day: '2024-05-06',
          yes: true,
          no: false,
          tags: ['a', 'b"c'],
          bigs: ['1', '2'],
          amounts: ['1.5'],
          small: 3,
          ratio: 0.25,
        });
        expect(ArrayBuffer.isView(row['bytes'])).toBe(true);
        expect(Array.from(row['bytes'] as Uint8Array)).toEqual([0, 255, 16]);
        expect(row['at']).toBeInstanceOf(Date);
        expect((row['at'] as Date).toISOString()).toBe('2024-05-06T07:08:09.123Z');
      });

      it('reads the current transaction id (xid8) as a string', async () => {
        const { rows } = await db.query<{ xid: unknown }>('select pg_current_xact_id() as xid');
        expect(rows[0]?.xid).toMatch(/^\d+$/);
      });

      it('binds bytes, dates, bigints, arrays, JSON text and objects', async () => {
        const { rows } = await db.query(
          `select $1::bytea as bytes, $2::bytea as buffer, $3::timestamptz as at, $4::int8 as big,
                  $5::text[] as tags, $6::jsonb as doc, $7::jsonb as list, $8::text as object_text,
                  $9::jsonb as object_doc, $10::text as missing, $11::boolean as yes`,
          [
            new Uint8Array([1, 2, 255]),
            Buffer.from([9, 8]),
            new Date('2024-01-02T03:04:05.678Z'),
            9007199254740993n,
            ['x', 'y,z', null],
            JSON.stringify({ nested: { n: 1 } }),
            JSON.stringify([1, 'two']),
            { kind: 'object' },
            { kind: 'object' },
            undefined,
            true,
          ],
        );
        const row = rows[0]!;
        expect(Array.from(row['bytes'] as Uint8Array)).toEqual([1, 2, 255]);
        expect(Array.from(row['buffer'] as Uint8Array)).toEqual([9, 8]);
        expect((row['at'] as Date).toISOString()).toBe('2024-01-02T03:04:05.678Z');
        expect(row).toMatchObject({
          big: '9007199254740993',
          tags: ['x', 'y,z', null],
          doc: { nested: { n: 1 } },
          list: [1, 'two'],
          object_doc: { kind: 'object' },
          missing: null,
          yes: true,
        });
        expect(JSON.parse(row['object_text'] as string)).toEqual({ kind: 'object' });
      });
    });

    describe('listen and notify', () => {
      it('delivers a notification to its channel', async () => {
        const channel = freshSchemaName('ch');
        const inbox = await collect(db, channel);
        await db.query('select pg_notify($1, $2)', [channel, 'hello']);
        expect(await inbox.next()).toBe('hello');
        await inbox.stop();
      });

      it('delivers on commit only', async () => {
        const channel = freshSchemaName('ch');
        const inbox = await collect(db, channel);
        await db
          .transaction(async (tx) => {
            await tx.query('select pg_notify($1, $2)', [channel, 'rolled back']);
            throw new Error('abort');
          })
          .catch(() => undefined);
        await db.transaction(async (tx) => {
          await tx.query('select pg_notify($1, $2)', [channel, 'committed']);
        });
        expect(await inbox.next()).toBe('committed');
        expect(inbox.received).toEqual(['committed']);
        await inbox.stop();
      });

      it('stops delivering once unlistened', async () => {
        const stopped = freshSchemaName('ch');
        const marker = freshSchemaName('ch');
        const stoppedInbox = await collect(db, stopped);
        const markerInbox = await collect(db, marker);
        await stoppedInbox.stop();
        await db.query('select pg_notify($1, $2)', [stopped, 'unheard']);
        // Notifications reach a session in order: once the marker arrives, the earlier one would have too.
        await db.query('select pg_notify($1, $2)', [marker, 'marker']);
        expect(await markerInbox.next()).toBe('marker');
        expect(stoppedInbox.received).toEqual([]);
        await markerInbox.stop();
      });

      it('refuses a channel that is not a lower-case identifier', async () => {
        await expect(db.listen('Bad Channel; drop table x', () => undefined)).rejects.toThrow(
          'invalid SQL identifier',
        );
      });
    });

    describe('advisory locks', () => {
      it('excludes a second holder until the first releases', async () => {
        const key = freshSchemaName('lock');
        const release = latch();
        const acquired = latch();
        const first = db.withAdvisoryLock(key, async () => {
          acquired.open();
          await release.promise;
          return 'first';
        });
        await acquired.promise;
        expect(await db.withAdvisoryLock(key, async () => 'second')).toBeUndefined();
        expect(await db.withAdvisoryLock(`${key}_other`, async () => 'other key')).toBe('other key');
        release.open();
        expect(await first).toBe('first');
        expect(await db.withAdvisoryLock(key, async () => 'after')).toBe('after');
      });

      it('makes a waiting caller wait for the holder', async () => {
        const key = freshSchemaName('lock');
        const events: string[] = [];
        const acquired = latch();
        const first = db.withAdvisoryLock(key, async () => {
          acquired.open();
          await sleep(200);
          events.push('first done');
        });
        await acquired.promise;
        const second = db.withAdvisoryLock(key, async () => events.push('second ran'), { wait: true });
        await Promise.all([first, second]);
        expect(events).toEqual(['first done', 'second ran']);
      });

      it('gives up waiting after timeoutMs', async () => {
        const key = freshSchemaName('lock');
        const release = latch();
        const acquired = latch();
        const holder = db.withAdvisoryLock(key, async () => {
          acquired.open();
          await release.promise;
        });
        await acquired.promise;
        const waited = await db
          .withAdvisoryLock(key, async () => 'never', { wait: true, timeoutMs: 300 })
          .catch((e: unknown) => e);
        expect(waited).toBeInstanceOf(AdvisoryLockTimeoutError);
        release.open();
        await holder;
        expect(await db.withAdvisoryLock(key, async () => 'free again')).toBe('free again');
      });

      it('releases the lock when work throws', async () => {
        const key = freshSchemaName('lock');
        await expect(
          db.withAdvisoryLock(key, async () => {
            throw new Error('leader crashed');
          }),
        ).rejects.toThrow('leader crashed');
        expect(await db.withAdvisoryLock(key, async () => 'taken over')).toBe('taken over');
      });
    });

    describe('migrations', () => {
      const tracing = (id: string): Migration => ({
        id,
        sql: (
          quoted,
        ) => `create table if not exists ${quoted}.trace (seq serial primary key, id text not null);
                          insert into ${quoted}.trace (id) values ('${id}')`,
      });
      const traced = async (target: string) =>
        (await db.query<{ id: string }>(`select id from ${quoteIdent(target)}.trace order by seq`)).rows.map(
          (row) => row.id,
        );

      it('applies pending migrations once, in order, and later only the new ones', async () => {
        const target = freshSchemaName('db_migrate');
        try {
          const first = [tracing('001_a'), tracing('002_b')];
          expect(await migrate(db, target, first)).toEqual(['001_a', '002_b']);
          expect(await migrate(db, target, first)).toEqual([]);
          expect(await migrate(db, target, [...first, tracing('003_c')])).toEqual(['003_c']);
          expect(await traced(target)).toEqual(['001_a', '002_b', '003_c']);
          const { rows } = await db.query(
            `select id, applied_at from ${quoteIdent(target)}.schema_migrations order by id`,
          );
          expect(rows.map((row) => row['id'])).toEqual(['001_a', '002_b', '003_c']);
          expect(rows[0]?.['applied_at']).toBeInstanceOf(Date);
        } finally {
          await dropSchema(db, target);
        }
      });

      it('applies each migration once when two runs race', async () => {
        const target = freshSchemaName('db_migrate');
        try {
          const migrations = [tracing('001_a'), tracing('002_b'), tracing('003_c')];
          const runs = await Promise.all([migrate(db, target, migrations), migrate(db, target, migrations)]);
          expect(runs.flat().sort()).toEqual(['001_a', '002_b', '003_c']);
          expect(await traced(target)).toEqual(['001_a', '002_b', '003_c']);
        } finally {
          await dropSchema(db, target);
        }
      });

      it('rolls back a failing migration, keeps the earlier ones, and retries it next time', async () => {
        const target = freshSchemaName('db_migrate');
        try {
          const broken: Migration = {
            id: '002_broken',
            sql: (quoted) => `insert into ${quoted}.trace (id) values ('x'); select 1 / 0`,
          };
          await expect(migrate(db, target, [tracing('001_a'), broken])).rejects.toThrow('division by zero');
          expect(await traced(target)).toEqual(['001_a']);
          expect(await migrate(db, target, [tracing('001_a'), tracing('002_fixed')])).toEqual(['002_fixed']);
        } finally {
          await dropSchema(db, target);
        }
      });

      it('refuses a bad schema name or duplicate ids before touching the database', async () => {
        await expect(migrate(db, 'Robert"; drop', [tracing('001_a')])).rejects.toThrow(
          'invalid SQL identifier',
        );
        await expect(
          migrate(db, freshSchemaName('db_migrate'), [tracing('001_a'), tracing('001_a')]),
        ).rejects.toThrow('appears twice');
      });
    });
  });
};
