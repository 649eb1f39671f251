import { createLogger, type Logger } from '@marketplace/platform';
import { E_ALREADY_LOCKED, E_TIMEOUT, Mutex, tryAcquire, withTimeout } from 'async-mutex';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
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
import {
  crossedError,
  toCallersRealm,
  type PGliteReply,
  type PGliteRequest,
  type PGliteWorkerData,
} from './pglite-worker-protocol.js';
import { createTransactionScope } from './transaction-scope.js';

export interface EmbeddedDatabaseOptions {
  /** Where the data lives (created if missing); in memory when absent. One process per directory. */
  readonly dataDir?: string;
  readonly logger?: Logger;
}

/**
 * The compiled worker: next to this module once compiled; from the TypeScript source (jest), the one under
 * `dist/src/`, since a worker thread loads plain JavaScript (build first: `tsc -b`).
 */
const workerEntry = (): URL =>
  import.meta.url.endsWith('.ts')
    ? new URL('../dist/src/pglite.worker.js', import.meta.url)
    : new URL('./pglite.worker.js', import.meta.url);

/** Distributive Omit, so each request variant keeps its own fields. */
type Call = PGliteRequest extends infer R ? (R extends PGliteRequest ? Omit<R, 'id'> : never) : never;

/** The caller's end of the PGlite worker thread: calls answered by id, notifications to their listeners. */
interface PGliteThread {
  call<T>(call: Call): Promise<T>;
  onNotification(listener: number, onNotify: ((payload: string) => void) | undefined): void;
  terminate(): Promise<void>;
}

/** Starts the worker and resolves once PGlite is open in it (or rejects with why it could not open). */
const startPGliteThread = (dataDir: string | undefined, logger: Logger): Promise<PGliteThread> => {
  const worker = new Worker(workerEntry(), { workerData: { dataDir } satisfies PGliteWorkerData });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<number, (payload: string) => void>();
  let nextId = 0;
  let failure: Error | undefined;
  let opened: { resolve: (thread: PGliteThread) => void; reject: (error: Error) => void } | undefined;
  let received = (value: unknown): unknown => value;

  /** The caller waiting for `id`, if any: none once the thread failed. */
  const settle = (id: number) => {
    const caller = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    return caller;
  };
  const fail = (error: Error): void => {
    failure ??= error;
    opened?.reject(failure);
    opened = undefined;
    for (const id of [...pending.keys()]) settle(id)?.reject(failure);
  };

  const thread: PGliteThread = {
    call<T>(call: Call): Promise<T> {
      if (failure) return Promise.reject(failure);
      const id = nextId++;
      if (pending.size === 0) worker.ref();
      return new Promise<T>((resolve, reject) => {
        // The worker answers each request with that request's result (pglite-worker-protocol.ts).
        pending.set(id, { resolve: (value) => resolve(value as T), reject });
        worker.postMessage({ ...call, id });
      });
    },
    onNotification(listener, onNotify) {
      if (onNotify) listeners.set(listener, onNotify);
      else listeners.delete(listener);
    },
    async terminate() {
      fail(new Error('the database is closed'));
      await worker.terminate();
    },
  };

  worker.on('message', (reply: PGliteReply) => {
    switch (reply.kind) {
      case 'ready':
        // An idle engine must not keep the process alive (PGlite in the caller's thread did not); a pending
        // call must (`call` and `settle`). Until now the caller awaited the opening (seconds for an initdb).
        worker.unref();
        if (!(reply.probe instanceof Date)) received = toCallersRealm;
        opened?.resolve(thread);
        opened = undefined;
        return;
      case 'failed':
        return fail(crossedError(reply.error));
      case 'result':
        return settle(reply.id)?.resolve(received(reply.result));
      case 'error':
        return settle(reply.id)?.reject(crossedError(reply.error));
      case 'notification':
        return listeners.get(reply.listener)?.(reply.payload);
    }
  });
  worker.on('error', (error) => {
    logger.error({ err: error }, 'the PGlite worker thread failed');
    fail(error);
  });
  worker.on('exit', (code) => {
    // Unless closed: every later call rejects, and the process should be restarted (the data is on disk).
    if (!failure) logger.error({ code }, 'the PGlite worker thread exited');
    fail(new Error(`the PGlite worker thread exited with code ${code}`));
  });

  return new Promise<PGliteThread>((resolve, reject) => {
    opened = {
      resolve,
      reject: (error) => {
        reject(error);
        void worker.terminate();
      },
    };
  });
};

/**
 * The embedded adapter of the Database port: PostgreSQL compiled to WASM, run in a worker thread of this
 * process (`pglite.worker.ts`), so its statements never hold this thread's event loop. It is one backend
 * session, so transactions queue behind each other (PGlite's `transaction` holds a mutex, and statements
 * outside a transaction wait for it), and advisory locks are in-process mutexes: only one process ever opens
 * a data directory.
 */
export const createEmbeddedDatabase = async (options: EmbeddedDatabaseOptions = {}): Promise<Database> => {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  if (dataDir !== undefined) await mkdir(dataDir, { recursive: true });
  const logger = options.logger ?? createLogger({ service: 'database' });
  const thread = await startPGliteThread(dataDir, logger);
  const scope = createTransactionScope();
  const lockMutexes = new Map<string, Mutex>();
  const heldLocks = new Set<AbortController>();
  let nextTransaction = 0;
  let nextListener = 0;
  let closing: Promise<void> | undefined;

  const query = <R extends Row>(sql: string, params: readonly unknown[] | undefined, tx?: number) =>
    thread.call<QueryResult<R>>({ op: 'query', sql, params: toDriverParams(params), tx });

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
      return query<R>(sql, params);
    },

    async transaction<T>(work: (tx: Transaction) => Promise<T>, txOptions?: { isolation?: IsolationLevel }) {
      scope.assertOutside('transaction');
      const setIsolation = txOptions?.isolation
        ? `SET TRANSACTION ${isolationClause(txOptions.isolation)}`
        : undefined;
      const id = nextTransaction++;
      await thread.call({ op: 'begin', tx: id, setIsolation });
      let ended = false;
      const tx: Transaction = {
        query: async (sql, params) => {
          if (ended) throw new Error('Transaction is closed');
          return query(sql, params, id);
        },
      };
      let outcome: Awaited<ReturnType<typeof scope.run<T>>>;
      try {
        outcome = await scope.run(() => work(tx));
      } catch (error) {
        ended = true;
        await thread.call({ op: 'rollback', tx: id });
        throw error;
      }
      ended = true;
      // Rejects, and rolls back, when a statement of the transaction failed (PGlite's 25P02).
      await thread.call({ op: 'commit', tx: id });
      outcome.committed();
      return outcome.result;
    },

    afterCommit: (callback) => scope.afterCommit(callback),

    async listen(channel, onNotify) {
      scope.assertOutside('listen');
      quoteIdent(channel);
      const listener = nextListener++;
      thread.onNotification(listener, (payload) => {
        try {
          onNotify(payload);
        } catch (error) {
          logger.error({ err: error, channel }, 'notification handler threw');
        }
      });
      try {
        await thread.call({ op: 'listen', listener, channel });
      } catch (error) {
        thread.onNotification(listener, undefined);
        throw error;
      }
      return async () => {
        await thread.call({ op: 'unlisten', listener });
        thread.onNotification(listener, undefined);
      };
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
        try {
          // Waits for the running transaction and queued queries; PGlite then closes its data directory.
          await thread.call({ op: 'close' });
        } finally {
          await thread.terminate();
        }
      })();
      return closing;
    },
  };
};
