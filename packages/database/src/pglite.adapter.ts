import { PGlite, types, type Transaction as PGliteTransaction } from '@electric-sql/pglite';
import { createLogger, type Logger } from '@marketplace/platform';
import { E_ALREADY_LOCKED, E_TIMEOUT, Mutex, tryAcquire, withTimeout } from 'async-mutex';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  AdvisoryLockTimeoutError,
  DEFAULT_LOCK_TIMEOUT_MS,
  quoteIdent,
  type AdvisoryLockOptions,
  type Database,
  type IsolationLevel,
  type QueryResult,
  type Row,
  type Transaction,
} from './database.port.js';
import { toDriverParams } from './driver-params.js';
import { isolationClause } from './isolation.js';
import { createTransactionScope } from './transaction-scope.js';

export interface EmbeddedDatabaseOptions {
  /** Where the data lives (created if missing); in memory when absent. One process per directory. */
  readonly dataDir?: string;
  readonly logger?: Logger;
}

/** PGlite parses int8 to number and date to Date; the port wants pg's strings (see database.port.ts). */
const UNIFORM_PARSERS = {
  [types.INT8]: (value: string) => value,
  [types.DATE]: (value: string) => value,
};

/** The longest run of queries before the event loop gets a turn (see `createEventLoopTurns`). */
const EVENT_LOOP_TURN_EVERY_MS = 5;

/**
 * PGlite runs each query synchronously on this thread and starts the next queued one from a promise callback,
 * so while callers keep its queue full (a bulk import, projections catching up) the event loop never reaches
 * I/O: no HTTP request was read for 20 s during a 1,000-row import. Before a query, once 5 ms have passed since
 * the last turn, the caller waits for one (`setImmediate`), and requests are read in between (docs/architecture.md,
 * "Embedded mode: PGlite and the event loop").
 */
const createEventLoopTurns = (): (() => Promise<void> | undefined) => {
  let lastTurn = performance.now();
  const turn = () =>
    new Promise<void>((resolve) =>
      setImmediate(() => {
        lastTurn = performance.now();
        resolve();
      }),
    );
  return () => (performance.now() - lastTurn > EVENT_LOOP_TURN_EVERY_MS ? turn() : undefined);
};

const runQuery = async <R extends Row>(
  target: PGlite | PGliteTransaction,
  sql: string,
  params: readonly unknown[] | undefined,
): Promise<QueryResult<R>> => {
  if (params === undefined || params.length === 0) {
    // The simple protocol, as pg uses without parameters: a migration script may hold several statements.
    const last = (await target.exec(sql)).at(-1);
    return { rows: (last?.rows ?? []) as R[], rowCount: last?.rowCount ?? last?.affectedRows ?? 0 };
  }
  const result = await target.query<R>(sql, toDriverParams(params));
  return { rows: result.rows, rowCount: result.rowCount ?? result.affectedRows ?? 0 };
};

/**
 * The embedded adapter of the Database port: PostgreSQL compiled to WASM, in this process. It is one backend
 * session, so transactions queue behind each other (PGlite's `transaction` holds a mutex), and advisory locks
 * are in-process mutexes: only one process ever opens a data directory.
 */
export const createEmbeddedDatabase = async (options: EmbeddedDatabaseOptions = {}): Promise<Database> => {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  if (dataDir !== undefined) await mkdir(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir, { parsers: UNIFORM_PARSERS });
  const logger = options.logger ?? createLogger({ service: 'database' });
  const scope = createTransactionScope();
  const eventLoopTurn = createEventLoopTurns();
  const run = async <R extends Row>(
    target: PGlite | PGliteTransaction,
    sql: string,
    params: readonly unknown[] | undefined,
  ): Promise<QueryResult<R>> => {
    await eventLoopTurn();
    return runQuery<R>(target, sql, params);
  };
  const lockMutexes = new Map<string, Mutex>();
  const heldLocks = new Set<AbortController>();
  let closing: Promise<void> | undefined;

  const acquireLock = async (
    mutex: Mutex,
    key: string,
    { wait = false, timeoutMs = DEFAULT_LOCK_TIMEOUT_MS }: AdvisoryLockOptions,
  ): Promise<(() => void) | undefined> => {
    try {
      return wait ? await withTimeout(mutex, timeoutMs).acquire() : await tryAcquire(mutex).acquire();
    } catch (error) {
      if (error === E_ALREADY_LOCKED) return undefined;
      if (error === E_TIMEOUT) throw new AdvisoryLockTimeoutError(key, timeoutMs);
      throw error;
    }
  };

  return {
    engine: 'pglite',

    async query<R extends Row = Row>(sql: string, params?: readonly unknown[]) {
      scope.assertOutside('query');
      return run<R>(pglite, sql, params);
    },

    async transaction<T>(work: (tx: Transaction) => Promise<T>, txOptions?: { isolation?: IsolationLevel }) {
      scope.assertOutside('transaction');
      const setIsolation = txOptions?.isolation
        ? `SET TRANSACTION ${isolationClause(txOptions.isolation)}`
        : undefined;
      const { result, committed } = await pglite.transaction(async (pgliteTx) => {
        if (setIsolation) await pgliteTx.exec(setIsolation);
        // PGlite's handle refuses queries once its transaction has ended.
        const tx: Transaction = { query: (sql, params) => run(pgliteTx, sql, params) };
        return scope.run(() => work(tx));
      });
      committed();
      return result;
    },

    afterCommit: (callback) => scope.afterCommit(callback),

    async listen(channel, onNotify) {
      scope.assertOutside('listen');
      quoteIdent(channel);
      const unlisten = await pglite.listen(channel, (payload) => {
        try {
          onNotify(payload);
        } catch (error) {
          logger.error({ err: error, channel }, 'notification handler threw');
        }
      });
      return () => unlisten();
    },

    async withAdvisoryLock<T>(
      key: string,
      work: (lockLost: AbortSignal) => Promise<T>,
      lockOptions: AdvisoryLockOptions = {},
    ) {
      const mutex = lockMutexes.get(key) ?? new Mutex();
      lockMutexes.set(key, mutex);
      const release = await acquireLock(mutex, key, lockOptions);
      if (release === undefined) return undefined;
      const lockLost = new AbortController();
      heldLocks.add(lockLost);
      try {
        return await work(lockLost.signal);
      } finally {
        heldLocks.delete(lockLost);
        release();
        // A waiter, if any, holds the mutex by now (async-mutex hands over synchronously); else forget the key.
        if (!mutex.isLocked() && lockMutexes.get(key) === mutex) lockMutexes.delete(key);
      }
    },

    close() {
      closing ??= (async () => {
        for (const lock of heldLocks) lock.abort(new Error('the database is closing'));
        // Waits for the running transaction and queued queries.
        await pglite.close();
      })();
      return closing;
    },
  };
};
