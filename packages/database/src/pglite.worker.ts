/**
 * The worker-thread entry of `createEmbeddedDatabase`: holds the PGlite engine, so its statements (each runs
 * synchronously, up to tens of milliseconds) take this thread's time, never the caller's event loop
 * (docs/architecture.md, "Embedded mode: PGlite and the event loop"). Runs from the compiled file
 * (`dist/src/pglite.worker.js`) in every setting, tests included.
 */
import {
  messages,
  parse,
  PGlite,
  types,
  type Results,
  type Transaction as PGliteTransaction,
} from '@electric-sql/pglite';
import { parentPort, workerData } from 'node:worker_threads';
import {
  crossingError,
  type PGliteReply,
  type PGliteRequest,
  type PGliteWorkerData,
} from './pglite-worker-protocol.js';
import { PreparedStatements } from './pglite-statement.js';

if (!parentPort) throw new Error('pglite.worker must run in a worker thread');
const port = parentPort;
const reply = (message: PGliteReply): void => port.postMessage(message);

/** PGlite parses int8 to number and date to Date; the port wants pg's strings (see database.port.ts). */
const UNIFORM_PARSERS = {
  [types.INT8]: (value: string) => value,
  [types.DATE]: (value: string) => value,
};

/**
 * What PGlite's `query` does, as one call into WASM of a prepared statement (pglite-statement.ts), under the same
 * locks: the query lock, and outside a transaction the transaction lock too (so the statement waits for an open
 * one) and a sync of the files after it.
 */
const runStatement = async (
  pglite: PGlite,
  statements: PreparedStatements,
  sql: string,
  params: unknown[],
  inTransaction: boolean,
): Promise<Results> => {
  const run = () =>
    pglite._runExclusiveQuery(async () => {
      const { message, parsed } = statements.statement(sql, params);
      // Not thrown by PGlite, so the answer shows whether the Parse went through before a later message failed.
      const replies = await pglite.execProtocolStream(message, { syncToFs: false, throwOnError: false });
      parsed(replies.some(({ name }) => name === 'parseComplete'));
      const failure = replies.find((reply) => reply instanceof messages.DatabaseError);
      // With what PGlite's `query` adds to its errors.
      if (failure !== undefined) throw Object.assign(failure, { query: sql, params });
      if (!inTransaction) await pglite.syncToFs();
      return parse.parseResults(replies, pglite.parsers)[0]!;
    });
  if (inTransaction) return run();
  await pglite._checkReady();
  return pglite._runExclusiveTransaction(run);
};

const runQuery = async (
  pglite: PGlite,
  statements: PreparedStatements,
  transaction: PGliteTransaction | undefined,
  sql: string,
  params: unknown[],
): Promise<{ rows: unknown[]; rowCount: number }> => {
  if (params.length === 0) {
    // The simple protocol, as pg uses without parameters: a migration script may hold several statements.
    const last = (await (transaction ?? pglite).exec(sql)).at(-1);
    return { rows: last?.rows ?? [], rowCount: last?.rowCount ?? last?.affectedRows ?? 0 };
  }
  const result = await runStatement(pglite, statements, sql, params, transaction !== undefined);
  return { rows: result.rows, rowCount: result.rowCount ?? result.affectedRows ?? 0 };
};

/** What ends an open transaction: the caller's commit or rollback, with that request's id to answer. */
interface OpenTransaction {
  readonly handle: PGliteTransaction;
  readonly end: (ending: { readonly commit: boolean; readonly id: number }) => void;
}

/** Thrown inside PGlite's transaction callback to have it roll back; the rollback request is then answered. */
const ROLLBACK_REQUESTED = new Error('rollback requested');

const serve = (pglite: PGlite): void => {
  const transactions = new Map<number, OpenTransaction>();
  const unlisteners = new Map<number, Promise<() => Promise<void>>>();
  const statements = new PreparedStatements();

  const begin = (id: number, tx: number, setIsolation: string | undefined): void => {
    let endingId: number | undefined;
    pglite
      .transaction(async (handle) => {
        if (setIsolation !== undefined) await handle.exec(setIsolation);
        const ending = await new Promise<{ commit: boolean; id: number }>((end) => {
          transactions.set(tx, { handle, end });
          reply({ kind: 'result', id, result: undefined });
        });
        endingId = ending.id;
        if (!ending.commit) throw ROLLBACK_REQUESTED;
      })
      .then(
        () => reply({ kind: 'result', id: endingId!, result: undefined }),
        (error: unknown) => {
          // Before it opened (BEGIN or SET TRANSACTION failed) the begin request gets the error.
          const answered = endingId ?? id;
          if (error === ROLLBACK_REQUESTED) reply({ kind: 'result', id: answered, result: undefined });
          else reply({ kind: 'error', id: answered, error: crossingError(error) });
        },
      );
  };

  const end = (id: number, tx: number, commit: boolean): void => {
    const open = transactions.get(tx);
    if (open === undefined) {
      reply({ kind: 'error', id, error: crossingError(new Error('Transaction is closed')) });
      return;
    }
    transactions.delete(tx);
    open.end({ commit, id });
  };

  const perform = async (
    request: Extract<PGliteRequest, { op: 'query' | 'listen' | 'unlisten' | 'close' }>,
  ): Promise<unknown> => {
    switch (request.op) {
      case 'query': {
        if (request.tx === undefined)
          return runQuery(pglite, statements, undefined, request.sql, request.params);
        const open = transactions.get(request.tx);
        if (open === undefined) throw new Error('Transaction is closed');
        return runQuery(pglite, statements, open.handle, request.sql, request.params);
      }
      case 'listen': {
        const unlisten = pglite.listen(request.channel, (payload) =>
          reply({ kind: 'notification', listener: request.listener, payload }),
        );
        unlisteners.set(request.listener, unlisten);
        await unlisten.catch((error: unknown) => {
          unlisteners.delete(request.listener);
          throw error;
        });
        return undefined;
      }
      case 'unlisten': {
        const unlisten = unlisteners.get(request.listener);
        unlisteners.delete(request.listener);
        await (
          await unlisten
        )?.();
        return undefined;
      }
      case 'close':
        // Waits for the open transaction and the queued statements.
        await pglite.close();
        return undefined;
    }
  };

  port.on('message', (request: PGliteRequest) => {
    switch (request.op) {
      case 'begin':
        return begin(request.id, request.tx, request.setIsolation);
      case 'commit':
      case 'rollback':
        return end(request.id, request.tx, request.op === 'commit');
      default:
        perform(request).then(
          (result) => reply({ kind: 'result', id: request.id, result }),
          (error: unknown) => reply({ kind: 'error', id: request.id, error: crossingError(error) }),
        );
    }
  });
};

const { dataDir } = workerData as PGliteWorkerData;
PGlite.create(dataDir, { parsers: UNIFORM_PARSERS }).then(
  (pglite) => {
    serve(pglite);
    reply({ kind: 'ready', probe: new Date(0) });
  },
  (error: unknown) => reply({ kind: 'failed', error: crossingError(error) }),
);
