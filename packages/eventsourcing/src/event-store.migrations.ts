import type { Migration } from '@marketplace/database';

/**
 * The event store's tables, for `migrate(db, schema, eventStoreMigrations)`. The events table is also the
 * outbox: the relay reads it in `(transaction_id, global_position)` order, and `outbox_checkpoints` keeps how
 * far each relay got.
 */
export const eventStoreMigrations: readonly Migration[] = [
  {
    id: 'eventsourcing-001-events',
    sql: (schema) => `
      create table ${schema}.events (
        global_position bigserial primary key,
        -- The appending transaction: the relay publishes a transaction's events only once every older
        -- transaction has ended (see outbox-relay.ts).
        transaction_id xid8 not null default pg_current_xact_id(),
        stream_id text not null,
        stream_type text not null,
        version integer not null check (version > 0),
        event_id uuid not null unique,
        type text not null,
        data jsonb not null,
        metadata jsonb not null,
        occurred_at timestamptz not null,
        -- Optimistic concurrency: of two appends at one version, the database lets exactly one commit.
        unique (stream_id, version)
      );
      create index events_outbox_order on ${schema}.events (transaction_id, global_position);

      -- Wakes the relay when the appending transaction commits (notifications are delivered at commit),
      -- whoever inserted the rows.
      create function ${schema}.notify_events_appended() returns trigger language plpgsql as $$
      begin
        perform pg_notify(tg_table_schema || '_events', '');
        return null;
      end $$;
      create trigger events_appended after insert on ${schema}.events
        for each statement execute function ${schema}.notify_events_appended();

      create table ${schema}.outbox_checkpoints (
        relay text primary key,
        transaction_id xid8 not null,
        global_position bigint not null,
        updated_at timestamptz not null default now()
      );`,
  },
  {
    // The relay is woken in process after the commit instead (events-appended.ts): a NOTIFY takes PostgreSQL's
    // global notification lock from the notifying commit until its WAL flush, serialising every append.
    id: 'eventsourcing-002-no-commit-notify',
    sql: (schema) => `
      drop trigger if exists events_appended on ${schema}.events;
      drop function if exists ${schema}.notify_events_appended();`,
  },
];
