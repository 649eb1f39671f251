import { quoteIdent, type Database, type Migration } from './database.port.js';

export interface MigrateOptions {
  /**
   * Bounds the wait for another process's migration run, and each migration's statements (which may build
   * indexes for longer than the usual statement timeout); default 10 minutes.
   */
  readonly timeoutMs?: number;
}

const DEFAULT_MIGRATION_TIMEOUT_MS = 10 * 60_000;

const assertWellFormed = (migrations: readonly Migration[]): void => {
  const seen = new Set<string>();
  for (const { id } of migrations) {
    if (id.trim() === '') throw new Error('a migration has an empty id');
    if (seen.has(id)) throw new Error(`migration id "${id}" appears twice`);
    seen.add(id);
  }
};

/**
 * Brings `schema` up to date: creates it and its `schema_migrations` table if absent, then applies, in order,
 * each migration not recorded there, each in its own transaction together with its record. Holds the advisory
 * lock `migrate:<schema>` throughout, so replicas starting together apply each migration once. Applied ids
 * unknown to `migrations` (a newer release ran first) are left alone. Resolves to the ids applied now.
 */
export const migrate = async (
  db: Database,
  schema: string,
  migrations: readonly Migration[],
  options: MigrateOptions = {},
): Promise<string[]> => {
  const quoted = quoteIdent(schema);
  assertWellFormed(migrations);
  const timeoutMs = options.timeoutMs ?? DEFAULT_MIGRATION_TIMEOUT_MS;
  const applied: string[] = [];
  await db.withAdvisoryLock(
    `migrate:${schema}`,
    async () => {
      await db.query(`create schema if not exists ${quoted}`);
      await db.query(
        `create table if not exists ${quoted}.schema_migrations (id text primary key, applied_at timestamptz not null)`,
      );
      const { rows } = await db.query<{ id: string }>(`select id from ${quoted}.schema_migrations`);
      const done = new Set(rows.map((row) => row.id));
      for (const migration of migrations.filter(({ id }) => !done.has(id))) {
        await db.transaction(async (tx) => {
          await tx.query(`select set_config('statement_timeout', $1, true)`, [String(timeoutMs)]);
          await tx.query(migration.sql(quoted));
          await tx.query(`insert into ${quoted}.schema_migrations (id, applied_at) values ($1, now())`, [
            migration.id,
          ]);
        });
        applied.push(migration.id);
      }
    },
    { wait: true, timeoutMs },
  );
  return applied;
};
