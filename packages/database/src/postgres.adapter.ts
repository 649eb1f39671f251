import { AppError, createLogger, type Logger } from '@marketplace/platform';
import { createHash } from 'node:crypto';
import pg from 'pg';
import {
  AdvisoryLockTimeoutError,
  DEFAULT_LOCK_TIMEOUT_MS,
  isConnectionFailure,
  sqlStateOf,
  type AdvisoryLockOptions,
  type Database,
  type IsolationLevel,
  type QueryResult,
  type Row,
  type Transaction,
} from './database.port.js';
import { toDriverParams } from './driver-params.js';
import { isolationClause } from './isolation.js';
import { PostgresNotificationListener } from './postgres-notification.listener.js';
import { createTransactionScope } from './transaction-scope.js';

export interface PostgresDatabaseOptions {
  /** `postgres://user:password@host:port/database`. */
  readonly url: string;
  /** Connections in the pool; default 10. At least 2: an advisory lock holds one while its work uses others. */
  readonly poolSize?: number;
  /** Shown in pg_stat_activity; default `marketplace`. The LISTEN connection adds ` listen`. */
  readonly applicationName?: string;
  /** Server-side limit on every statement; default 30 s. */
  readonly statementTimeoutMs?: number;
  /** Limit on opening a connection, and so on waiting for a pooled one; default 5 s. */
  readonly connectTimeoutMs?: number;
  readonly logger?: Logger;
}

const SQLSTATE_QUERY_CANCELED = '57014';
const TRY_LOCK_SQL = 'select pg_try_advisory_lock(hashtextextended($1, 0)) as acquired';
const LOCK_SQL = 'select pg_advisory_lock(hashtextextended($1, 0))';
const UNLOCK_SQL = 'select pg_advisory_unlock(hashtextextended($1, 0))';

/**
 * pg's defaults already give int8, numeric and xid8 as strings; numeric[] would be floats and date a local
 * midnight, so those two follow the embedded adapter's rule instead (see database.port.ts).
 */
const uniformTypes = (): pg.CustomTypesConfig => {
  const types = new pg.TypeOverrides();
  // @types/pg mistypes the parser it returns as taking an oid; it takes the column's text.
  const textArray = types.getTypeParser(1009 /* text[] */) as unknown as (value: string) => string[];
  types.setTypeParser(1231 /* numeric[] */, textArray);
  types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);
  types.setTypeParser(1182 /* date[] */, textArray);
  return types;
};

const toQueryResult = <R extends Row>(result: pg.QueryResult<R> | pg.QueryResult<R>[]): QueryResult<R> => {
  // A parameterless multi-statement text (a migration script) answers one result per statement.
  const last = Array.isArray(result) ? result.at(-1) : result;
  return { rows: last?.rows ?? [], rowCount: last?.rowCount ?? 0 };
};

/** Distinct statement texts given a name; beyond it (a runaway of generated SQL) statements go unnamed. */
const MAX_NAMED_STATEMENTS = 2_000;
const statementNames = new Map<string, string>();

/**
 * The name a parameterized statement is prepared under: the same text gets the same name in every pool, so each
 * connection parses and plans it once and then only binds and executes it (docs/architecture.md, "How work
 * moves": prepared statements). The name is a digest of the text, so two texts never share one. Statements
 * without parameters (migration scripts, `BEGIN`) stay unnamed: the simple protocol runs scripts.
 */
const statementNameOf = (sql: string): string | undefined => {
  let name = statementNames.get(sql);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `mk_${createHash('sha256').update(sql).digest('hex').slice(0, 40)}`;
    statementNames.set(sql, name);
  }
  return name;
};

const runQuery = async <R extends Row>(
  target: pg.Pool | pg.PoolClient,
  sql: string,
  params: readonly unknown[] | undefined,
): Promise<QueryResult<R>> => {
  const values = toDriverParams(params);
  const name = values !== undefined && values.length > 0 ? statementNameOf(sql) : undefined;
  const result = await (name === undefined
    ? target.query<R>(sql, values)
    : target.query<R>({ name, text: sql, values }));
  return toQueryResult(result as pg.QueryResult<R> | pg.QueryResult<R>[]);
};

/**
 * Runs `work`, turning a lost or refused connection into an `unavailable` AppError (the driver's error as its
 * cause), so every edge answers it as the transient failure it is (gRPC UNAVAILABLE, HTTP 503) instead of an
 * internal error. A transaction whose connection broke was rolled back by the server.
 */
const reportingLostConnections = async <T>(work: () => Promise<T>): Promise<T> => {
  try {
    return await work();
  } catch (error) {
    if (!isConnectionFailure(error)) throw error;
    throw new AppError('unavailable', 'the database connection failed; retry shortly', [], { cause: error });
  }
};

/** The `pg` adapter of the Database port: a pool, plus one dedicated connection for LISTEN. */
export const createPostgresDatabase = (options: PostgresDatabaseOptions): Database => {
  if (!URL.canParse(options.url) || !/^postgres(ql)?:$/.test(new URL(options.url).protocol)) {
    throw new Error('url must be a postgres:// or postgresql:// URL');
  }
  const poolSize = options.poolSize ?? 10;
  if (!Number.isInteger(poolSize) || poolSize < 2)
    throw new Error(`poolSize must be an integer ≥ 2, got ${poolSize}`);
  const applicationName = options.applicationName ?? 'marketplace';
  const logger = options.logger ?? createLogger({ service: 'database' });
  const connection: pg.ClientConfig = {
    connectionString: options.url,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    // Detects a silently dead peer on an idle or waiting connection.
    keepAlive: true,
    types: uniformTypes(),
  };
  const pool = new pg.Pool({ ...connection, application_name: applicationName, max: poolSize });
  // An idle pooled connection that fails is dropped by the pool; without a listener the error would crash us.
  pool.on('error', (error) => logger.warn({ err: error }, 'idle PostgreSQL connection failed'));
  const listener = new PostgresNotificationListener(
    { ...connection, application_name: `${applicationName} listen` },
    logger,
  );
  const scope = createTransactionScope();
  const heldLocks = new Set<AbortController>();
  let closing: Promise<void> | undefined;

  /**
   * Checks out a client for the caller's exclusive use. A checked-out client that fails emits `error`, which
   * would crash the process unhandled; `onLost` hears it (and the connection's end) until release.
   */
  const checkOut = async (onLost: (error?: Error) => void) => {
    const client = await pool.connect();
    client.on('error', onLost);
    client.on('end', onLost);
    return {
      client,
      release: (brokenBy?: Error): void => {
        client.off('error', onLost);
        client.off('end', onLost);
        // Releasing with an error destroys the connection, which also drops any session state it holds.
        client.release(brokenBy);
      },
    };
  };

  const acquireLock = async (
    client: pg.PoolClient,
    key: string,
    { wait = false, timeoutMs = DEFAULT_LOCK_TIMEOUT_MS }: AdvisoryLockOptions,
  ): Promise<boolean> => {
    if (!wait) {
      const { rows } = await client.query<{ acquired: boolean }>(TRY_LOCK_SQL, [key]);
      return rows[0]?.acquired === true;
    }
    // A session-level lock taken inside a transaction outlives it; the transaction only scopes the timeout.
    await client.query('BEGIN');
    try {
      await client.query(`select set_config('statement_timeout', $1, true)`, [String(timeoutMs)]);
      await client.query(LOCK_SQL, [key]);
      await client.query('COMMIT');
      return true;
    } catch (error) {
      await client.query('ROLLBACK');
      throw sqlStateOf(error) === SQLSTATE_QUERY_CANCELED
        ? new AdvisoryLockTimeoutError(key, timeoutMs)
        : error;
    }
  };

  const runTransaction = async <T>(
    work: (tx: Transaction) => Promise<T>,
    txOptions?: { isolation?: IsolationLevel },
  ): Promise<T> => {
    const begin = txOptions?.isolation ? `BEGIN ${isolationClause(txOptions.isolation)}` : 'BEGIN';
    const { client, release } = await checkOut((error) => {
      if (error) logger.warn({ err: error }, 'PostgreSQL connection failed inside a transaction');
    });
    let finished = false;
    const tx: Transaction = {
      query<R extends Row = Row>(sql: string, params?: readonly unknown[]) {
        if (finished) return Promise.reject(new Error('this transaction has already ended'));
        return runQuery<R>(client, sql, params);
      },
    };
    try {
      await client.query(begin);
      const { result, committed } = await scope.run(() => work(tx));
      finished = true;
      const commit = await client.query('COMMIT');
      // PostgreSQL answers COMMIT of a transaction that already failed (an error `work` caught) with ROLLBACK.
      if (commit.command === 'ROLLBACK')
        throw new Error('the transaction failed earlier and was rolled back');
      release();
      committed();
      return result;
    } catch (error) {
      finished = true;
      try {
        await client.query('ROLLBACK');
        release();
      } catch (rollbackError) {
        release(rollbackError as Error);
      }
      throw error;
    }
  };

  return {
    engine: 'postgres',

    async query<R extends Row = Row>(sql: string, params?: readonly unknown[]) {
      scope.assertOutside('query');
      return reportingLostConnections(() => runQuery<R>(pool, sql, params));
    },

    afterCommit: (callback) => scope.afterCommit(callback),

    async transaction<T>(work: (tx: Transaction) => Promise<T>, txOptions?: { isolation?: IsolationLevel }) {
      scope.assertOutside('transaction');
      return reportingLostConnections(() => runTransaction(work, txOptions));
    },

    async listen(channel, onNotify) {
      scope.assertOutside('listen');
      return listener.listen(channel, onNotify);
    },

    async withAdvisoryLock<T>(
      key: string,
      work: (lockLost: AbortSignal) => Promise<T>,
      lockOptions: AdvisoryLockOptions = {},
    ) {
      const lockLost = new AbortController();
      const { client, release } = await checkOut((error) =>
        lockLost.abort(error ?? new Error(`the session holding advisory lock "${key}" ended`)),
      );
      heldLocks.add(lockLost);
      let brokenBy: Error | undefined;
      try {
        const acquired = await acquireLock(client, key, lockOptions).catch((error: unknown) => {
          if (!(error instanceof AdvisoryLockTimeoutError)) brokenBy = error as Error;
          throw error;
        });
        if (!acquired) return undefined;
        try {
          return await work(lockLost.signal);
        } finally {
          await client.query(UNLOCK_SQL, [key]).catch((error: unknown) => {
            brokenBy = error as Error;
          });
        }
      } finally {
        heldLocks.delete(lockLost);
        release(brokenBy);
      }
    },

    close() {
      closing ??= (async () => {
        for (const lock of heldLocks) lock.abort(new Error('the database is closing'));
        await listener.close();
        // Resolves once every checked-out client is back: running transactions finish first.
        await pool.end();
      })();
      return closing;
    },
  };
};
