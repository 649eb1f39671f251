/**
 * The Database port: the one way services talk to PostgreSQL. Two adapters pass the same contract suite:
 * `pg` (a real server, DATABASE_URL) and PGlite (embedded, a data directory). The same SQL runs on both.
 *
 * Tables are always schema-qualified by the component that owns them (each service owns one schema; a test
 * gets a fresh schema), so one database, or one embedded engine, hosts every service.
 *
 * Values are the same on both adapters. Results: int8 and numeric (and their arrays) are decimal strings,
 * xid8 is a string, json/jsonb are parsed, bytea is a Uint8Array (a Buffer on pg), timestamptz is a Date, date
 * is a `YYYY-MM-DD` string, arrays are JS arrays. Parameters: `null`/`undefined` → NULL, Uint8Array → bytea,
 * Date → ISO 8601 timestamp, bigint → decimal text, arrays → PostgreSQL arrays, plain objects → JSON text.
 * For a json/jsonb parameter pass `JSON.stringify(value)`: it is the one rule that works for every JSON value
 * (an array would otherwise be sent as a PostgreSQL array).
 */
export type Row = Record<string, unknown>;

export interface QueryResult<R extends Row = Row> {
  readonly rows: R[];
  /** Rows returned (SELECT) or changed (INSERT/UPDATE/DELETE); 0 for statements that touch no rows. */
  readonly rowCount: number;
}

export interface Queryable {
  /**
   * Runs one statement with `$1`-style parameters. Without parameters the text may hold several statements
   * (a migration script); the result is the last statement's.
   */
  query<R extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
}

/** A transaction's handle; it refuses queries once its transaction has ended. */
export type Transaction = Queryable;

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface AdvisoryLockOptions {
  /** Wait for the holder to release instead of returning `undefined` at once. */
  readonly wait?: boolean;
  /** How long a waiting call waits before failing with AdvisoryLockTimeoutError; default 30 s. */
  readonly timeoutMs?: number;
}

export interface Database extends Queryable {
  /** Which engine is behind the port; for diagnostics and the few measured differences, never for SQL. */
  readonly engine: 'postgres' | 'pglite';
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. Inside `work`, use
   * `tx` only: the database handle refuses queries, transactions and listens there (the embedded engine has one
   * session, so they would wait for this very transaction forever).
   */
  transaction<T>(work: (tx: Transaction) => Promise<T>, options?: { isolation?: IsolationLevel }): Promise<T>;
  /**
   * Runs `callback` once the transaction this is called in (one of this database's) has committed, never when
   * it rolls back; outside a transaction, at once. For in-process wake-ups after a write (the outbox relay's):
   * the callback must be quick, and what it throws is ignored.
   */
  afterCommit(callback: () => void): void;
  /**
   * LISTEN on a channel (a lower-case identifier); resolves once listening. The returned function stops
   * listening. Notifications are wake-up hints: one sent while a listener reconnects is lost, so poll too.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * Runs `work` while holding the session-level advisory lock `key`, or returns `undefined` at once when
   * another session holds it (unless `wait`). Used for leader election (one outbox relay per service) and
   * migrations. `lockLost` aborts when the lock can no longer be guaranteed (its session died, or the database
   * is closing): a leader must stop then.
   */
  withAdvisoryLock<T>(
    key: string,
    work: (lockLost: AbortSignal) => Promise<T>,
    options?: AdvisoryLockOptions,
  ): Promise<T | undefined>;
  /** Waits for running transactions, then closes every connection. */
  close(): Promise<void>;
}

/** One migration of a schema; `sql` receives the quoted schema name so tests can use fresh schemas. */
export interface Migration {
  readonly id: string;
  readonly sql: (schema: string) => string;
}

/** Postgres error codes the application layer reacts to. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_SERIALIZATION_FAILURE = '40001';

/** The SQLSTATE of a driver error, whichever adapter raised it. */
export const sqlStateOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;

/**
 * SQLSTATEs of a lost or refused connection: class 08 (connection exception), the server shutting down or
 * terminating the backend (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now) and 53300
 * (too_many_connections). Transient: the same request may succeed on a fresh connection a moment later.
 */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Node's socket error codes and node-postgres' messages for a connection that broke or never opened. */
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);
const LOST_CONNECTION_MESSAGE =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect/;

/** Whether `error` says the connection to the database was lost or could not be opened (not a SQL error). */
export const isConnectionFailure = (error: unknown): boolean => {
  const code = sqlStateOf(error);
  if (code !== undefined)
    return code.startsWith('08') || CONNECTION_SQLSTATES.has(code) || SOCKET_CODES.has(code);
  return error instanceof Error && LOST_CONNECTION_MESSAGE.test(error.message);
};

/** Quotes an identifier (schema, table) for interpolation into SQL. */
export const quoteIdent = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`);
  return `"${name}"`;
};

/** A waiting `withAdvisoryLock` gave up. */
export class AdvisoryLockTimeoutError extends Error {
  constructor(
    readonly key: string,
    readonly timeoutMs: number,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for advisory lock "${key}"`);
    this.name = 'AdvisoryLockTimeoutError';
  }
}

export const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
