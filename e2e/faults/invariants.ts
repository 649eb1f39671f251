import type pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { MarketplaceClient } from '../src/harness/marketplace-client.js';
import { OUTBOXES, PROJECTIONS, type Projection } from './topology.js';
import { RUN_WORD } from './steady-load.js';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const SAMPLE_SIZE = 10;

/** A set difference as reported: how many, and a few of them to start looking from. */
export interface Difference {
  readonly count: number;
  readonly sample: readonly string[];
}

export interface ProjectionReport {
  readonly group: string;
  readonly sourceEvents: number;
  /** Source events never applied (lost effects). */
  readonly notApplied: Difference;
  /** Applied ids that are no source event (effects of events that do not exist). */
  readonly appliedUnknown: Difference;
  /** Rows whose version is not their stream's latest (an effect applied twice, out of order or not at all). */
  readonly staleRows: Difference;
  /** Streams without a row, for read models that keep every stream. */
  readonly missingRows: Difference;
  /** Rows of streams that do not exist. */
  readonly foreignRows: Difference;
}

export interface InvariantReport {
  readonly passed: boolean;
  readonly outbox: {
    readonly events: number;
    readonly messagesOnLog: number;
    /** Outbox events that never reached the log (must be none). */
    readonly missingFromLog: Difference;
    /** Log messages that are no outbox event (a rolled-back write published; must be none). */
    readonly notInOutbox: Difference;
    /** Events on the log more than once (allowed: at least once; consumers deduplicate). */
    readonly publishedMoreThanOnce: number;
  };
  readonly projections: readonly ProjectionReport[];
  readonly writes: {
    readonly acknowledgedListings: number;
    readonly acknowledgedAccounts: number;
    /** 2xx'd writes whose event is not in the event store (must be none). */
    readonly lost: Difference;
  };
  readonly search: {
    readonly found: number;
    /** Listings search returns more than once (must be none). */
    readonly duplicates: Difference;
    /** Listings that exist but search does not find. */
    readonly missing: Difference;
    /** Ids search returns that are no listing. */
    readonly unexpected: Difference;
  };
}

const difference = (from: Iterable<string>, without: ReadonlySet<string>): Difference => {
  const left = [...from].filter((item) => !without.has(item));
  return { count: left.length, sample: left.slice(0, SAMPLE_SIZE) };
};

const noDifference = (...differences: Difference[]): boolean => differences.every((d) => d.count === 0);

/** The JetStream stream of a topic of this run, as the NATS event log names it. */
const streamNameOf = (namespace: string, streamType: string): string =>
  `${namespace}.marketplace.${streamType}.v1`.replaceAll('.', '_').toUpperCase();

/** How often each `ce_id` is on the given streams, read from the first message to the last. */
export const readLogEventIds = async (streams: readonly string[]): Promise<Map<string, number>> => {
  const connection = await connect({ servers: NATS_URL, timeout: 5_000 });
  const counts = new Map<string, number>();
  try {
    const manager = await jetstreamManager(connection);
    const jetstream = manager.jetstream();
    for (const name of streams) {
      const info = await manager.streams.info(name).catch(() => undefined);
      if (!info || info.state.messages === 0) continue;
      const lastSequence = info.state.last_seq;
      const consumer = await jetstream.consumers.get(name);
      const messages = await consumer.consume({ max_messages: 500 });
      for await (const message of messages) {
        const id = message.headers?.get('ce_id') ?? `<no ce_id: ${name}#${message.seq}>`;
        counts.set(id, (counts.get(id) ?? 0) + 1);
        if (message.seq >= lastSequence) break;
      }
      await messages.close();
    }
  } finally {
    await connection.close();
  }
  return counts;
};

const column = async (db: pg.Pool, sql: string, params: unknown[] = []): Promise<string[]> =>
  (await db.query<{ value: string }>(sql, params)).rows.map((row) => row.value);

const checkProjection = async (db: pg.Pool, projection: Projection): Promise<ProjectionReport> => {
  const { schema, group, source, readModel } = projection;
  const sourceEvents = new Set(
    await column(db, `select event_id::text as value from ${source.schema}.events where stream_type = $1`, [
      source.streamType,
    ]),
  );
  const applied = new Set(
    await column(
      db,
      `select event_id as value from ${schema}.projection_applied_events where projection = $1`,
      [group],
    ),
  );
  const report = {
    group,
    sourceEvents: sourceEvents.size,
    notApplied: difference(sourceEvents, applied),
    appliedUnknown: difference(applied, sourceEvents),
  };
  if (!readModel) {
    const none = { count: 0, sample: [] };
    return { ...report, staleRows: none, missingRows: none, foreignRows: none };
  }
  const latest = new Map(
    (
      await db.query<{ stream_id: string; version: string }>(
        `select stream_id, max(version)::text as version from ${source.schema}.events
         where stream_type = $1 group by stream_id`,
        [source.streamType],
      )
    ).rows.map((row) => [row.stream_id, row.version]),
  );
  const rows = (
    await db.query<{ stream_id: string; version: string }>(
      `select ${readModel.streamId} as stream_id, ${readModel.version}::text as version
       from ${schema}.${readModel.table}`,
    )
  ).rows;
  const rowStreams = new Set(rows.map((row) => row.stream_id));
  const stale = rows
    .filter((row) => latest.has(row.stream_id) && latest.get(row.stream_id) !== row.version)
    .map((row) => `${row.stream_id}@${row.version} (latest ${latest.get(row.stream_id)})`);
  return {
    ...report,
    staleRows: { count: stale.length, sample: stale.slice(0, SAMPLE_SIZE) },
    missingRows: readModel.everyStream ? difference(latest.keys(), rowStreams) : { count: 0, sample: [] },
    foreignRows: difference(rowStreams, new Set(latest.keys())),
  };
};

/**
 * The promises checked after every fault, by set equality over the whole run so far:
 * every outbox event is on the log (at least once), and the log holds nothing else; every projection applied
 * each source event once and its rows carry their stream's latest version; every write the gateway answered
 * 2xx for is in the event store; search finds every listing exactly once.
 */
export const checkInvariants = async (context: {
  readonly db: pg.Pool;
  readonly namespace: string;
  readonly client: MarketplaceClient;
  readonly acknowledgedListings: ReadonlySet<string>;
  readonly acknowledgedAccounts: ReadonlySet<number>;
}): Promise<InvariantReport> => {
  const { db } = context;
  const outboxEvents = new Set<string>();
  const streamTypes = new Set<string>();
  for (const outbox of OUTBOXES) {
    const rows = await db.query<{ event_id: string; stream_type: string }>(
      `select event_id::text, stream_type from ${outbox.schema}.events`,
    );
    for (const row of rows.rows) {
      outboxEvents.add(row.event_id);
      streamTypes.add(row.stream_type);
    }
  }
  const onLog = await readLogEventIds([...streamTypes].map((type) => streamNameOf(context.namespace, type)));
  const outbox = {
    events: outboxEvents.size,
    messagesOnLog: [...onLog.values()].reduce((sum, count) => sum + count, 0),
    missingFromLog: difference(outboxEvents, new Set(onLog.keys())),
    notInOutbox: difference(onLog.keys(), outboxEvents),
    publishedMoreThanOnce: [...onLog.values()].filter((count) => count > 1).length,
  };

  const projections: ProjectionReport[] = [];
  for (const projection of PROJECTIONS) projections.push(await checkProjection(db, projection));

  const streams = new Set(
    await column(db, `select distinct stream_id as value from listing.events where stream_type = 'listing'`),
  );
  const accountStreams = new Set(
    await column(db, `select distinct stream_id as value from identity.events where stream_type = 'account'`),
  );
  const lostListings = difference(context.acknowledgedListings, streams);
  const lostAccounts = difference(
    [...context.acknowledgedAccounts].map((id) => `account_${id}`),
    accountStreams,
  );
  const writes = {
    acknowledgedListings: context.acknowledgedListings.size,
    acknowledgedAccounts: context.acknowledgedAccounts.size,
    lost: {
      count: lostListings.count + lostAccounts.count,
      sample: [...lostListings.sample, ...lostAccounts.sample].slice(0, SAMPLE_SIZE),
    },
  };

  const found = (await context.client.searchAll(RUN_WORD)).map((product) => product.id);
  const seen = new Set<string>();
  const duplicates = found.filter((id) => seen.has(id) || !seen.add(id));
  const search = {
    found: found.length,
    duplicates: { count: duplicates.length, sample: duplicates.slice(0, SAMPLE_SIZE) },
    missing: difference(streams, seen),
    unexpected: difference(seen, streams),
  };

  const passed =
    noDifference(outbox.missingFromLog, outbox.notInOutbox, writes.lost) &&
    projections.every((p) =>
      noDifference(p.notApplied, p.appliedUnknown, p.staleRows, p.missingRows, p.foreignRows),
    ) &&
    noDifference(search.duplicates, search.missing, search.unexpected);
  return { passed, outbox, projections, writes, search };
};
