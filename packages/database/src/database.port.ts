/**
 * The Database port: the one way services talk to PostgreSQL. Two adapters pass the same contract suite:
 * `pg` (a real server, DATABASE_URL) and PGlite (embedded, a data directory). The same SQL runs on both.
 *
 * Tables are always schema-qualified by the component that owns them (each service owns one schema; a test
 * gets a fresh schema), so one database, or one embedded engine, hosts every service.
 */
export type Row = Record<string, unknown>;

export interface QueryResult<R extends Row = Row> {
  readonly rows: R[];
  readonly rowCount: number;
}

export interface Queryable {
  /** Runs one statement with `$1`-style parameters. */
  query<R extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
}

export type Transaction = Queryable;

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface Database extends Queryable {
  /** Which engine is behind the port; for diagnostics and the few measured differences, never for SQL. */
  readonly engine: 'postgres' | 'pglite';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>, options?: { isolation?: IsolationLevel }): Promise<T>;
  /** LISTEN on a channel; resolves once listening. The returned function stops listening. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * Runs `work` while holding the session-level advisory lock `key`, or returns `undefined` at once when
   * another session holds it. Used for leader election (one outbox relay per service) and migrations.
   */
  withAdvisoryLock<T>(key: string, work: () => Promise<T>, options?: { wait?: boolean }): Promise<T | undefined>;
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

/** Quotes an identifier (schema, table) for interpolation into SQL. */
export const quoteIdent = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`);
  return `"${name}"`;
};
