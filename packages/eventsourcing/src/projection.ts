import { quoteIdent, type Database, type Migration, type Transaction } from '@marketplace/database';
import type { DeliveredMessage, EventLog, Subscription } from '@marketplace/eventlog';

/** The tables `startProjection` needs in the projection's schema, for `migrate(db, schema, projectionMigrations)`. */
export const projectionMigrations: readonly Migration[] = [
  {
    id: 'eventsourcing-projection-001-applied-events',
    sql: (schema) => `
      create table ${schema}.projection_applied_events (
        projection text not null,
        event_id text not null,
        applied_at timestamptz not null default now(),
        primary key (projection, event_id)
      );`,
  },
];

export interface ProjectionOptions<E> {
  readonly log: EventLog;
  readonly db: Database;
  /** The schema holding the projection's tables (and `projectionMigrations`'). */
  readonly schema: string;
  readonly topic: string;
  /** The consumer group, which also names the projection in its record of applied events. */
  readonly group: string;
  /** The event a message carries; throw on a message this version cannot read (the log retries it). */
  readonly decode: (message: DeliveredMessage) => E;
  /** Writes the projection's rows for one event, in `tx` only. */
  readonly apply: (tx: Transaction, event: E, message: DeliveredMessage) => Promise<void>;
  /** Where a new group starts; default `beginning` (a projection needs the whole history). */
  readonly from?: 'beginning' | 'latest';
}

/** The id a message is deduplicated by: the event id the outbox relay sends as CloudEvents `ce_id`. */
export const eventIdOf = (message: DeliveredMessage): string => {
  const id = message.headers['ce_id'];
  if (id === undefined || id === '') {
    throw new Error(`message ${message.topic}/${message.partition}/${message.offset} has no ce_id header`);
  }
  return id;
};

/**
 * Keeps a read model in PostgreSQL up to date from the log, exactly once in effect although the log delivers at
 * least once: each message is applied in one transaction that also records its event id, and a message whose
 * id is already recorded is acknowledged without applying it again.
 */
export const startProjection = async <E>(options: ProjectionOptions<E>): Promise<Subscription> => {
  const { db, decode, apply } = options;
  const appliedEvents = `${quoteIdent(options.schema)}.projection_applied_events`;
  return options.log.subscribe({
    topic: options.topic,
    group: options.group,
    from: options.from ?? 'beginning',
    handler: async (message) => {
      const eventId = eventIdOf(message);
      const event = decode(message);
      await db.transaction(async (tx) => {
        const { rowCount } = await tx.query(
          `insert into ${appliedEvents} (projection, event_id) values ($1, $2) on conflict do nothing`,
          [options.group, eventId],
        );
        if (rowCount === 1) await apply(tx, event, message);
      });
    },
  });
};
