import type { Migration } from '@marketplace/database';

/**
 * The listings context's own schema (`listing_imports` in production): the imports of spreadsheet and CSV
 * files and their rows (docs/imports.md). A row's `chunk` is set when the worker plans the chunk, before its
 * bulk call, so a resumed import sends a planned chunk again with the same idempotency key (imports stored
 * before `002` had every chunk planned on arrival); `status` stays null until its chunk is applied. An upload's
 * `Idempotency-Key` is kept on its import with the digest of its file and options (`004`) for 24 hours.
 */
export const LISTING_IMPORT_MIGRATIONS: readonly Migration[] = [
  {
    id: '001-imports',
    sql: (schema) => `
      CREATE TABLE ${schema}.imports (
        id uuid PRIMARY KEY,
        seller_account_id bigint NOT NULL,
        mode text NOT NULL,
        format text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        rows_total integer NOT NULL,
        rows_processed integer NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        failure text,
        lease_until timestamptz,
        created_at timestamptz NOT NULL,
        finished_at timestamptz
      );
      CREATE INDEX imports_pending ON ${schema}.imports (created_at) WHERE status IN ('queued', 'running');
      CREATE TABLE ${schema}.import_rows (
        import_id uuid NOT NULL REFERENCES ${schema}.imports (id),
        row_number integer NOT NULL,
        chunk integer,
        body jsonb,
        status text,
        product_id text,
        errors jsonb NOT NULL DEFAULT '[]',
        PRIMARY KEY (import_id, row_number)
      );
      CREATE INDEX import_rows_pending ON ${schema}.import_rows (import_id, chunk) WHERE status IS NULL;
    `,
  },
  {
    id: '002-unplanned-rows',
    sql: (schema) => `
      CREATE INDEX import_rows_unplanned ON ${schema}.import_rows (import_id, row_number)
        WHERE status IS NULL AND chunk IS NULL;
    `,
  },
  {
    // Imports take turns (docs/imports.md, "How it runs"): the one that has waited longest goes next.
    id: '003-import-turns',
    sql: (schema) => `
      ALTER TABLE ${schema}.imports ADD COLUMN turn_at timestamptz;
      DROP INDEX ${schema}.imports_pending;
      CREATE INDEX imports_pending ON ${schema}.imports ((coalesce(turn_at, created_at)))
        WHERE status IN ('queued', 'running');
    `,
  },
  {
    // An upload's Idempotency-Key (docs/imports.md, docs/idempotency.md): one import per seller and key, by a
    // unique index the upload's insert meets, so two uploads racing with one key make one import.
    id: '004-import-idempotency-keys',
    sql: (schema) => `
      ALTER TABLE ${schema}.imports ADD COLUMN idempotency_key text, ADD COLUMN request_hash text;
      CREATE UNIQUE INDEX imports_idempotency_key ON ${schema}.imports (seller_account_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE INDEX imports_keyed ON ${schema}.imports (created_at) WHERE idempotency_key IS NOT NULL;
    `,
  },
];
