import type pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { MarketplaceClient } from '../src/harness/marketplace-client.js';
import { OUTBOXES, PROJECTIONS, tableIn, type Projection } from './topology.js';
import {
  isIndefinite,
  RUN_WORD,
  SCHEMA_OF_KEYED_WRITE,
  type KeyedOperation,
  type KeyedWrite,
} from './steady-load.js';

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
    /** How many 2xx'd writes, by the event store (schema) that must hold them. */
    readonly acknowledged: Readonly<Record<string, number>>;
    /** 2xx'd writes whose stream is not in their event store (must be none). */
    readonly lost: Difference;
  };
  readonly effects: EffectsReport;
  readonly keys: KeysReport;
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

/** Effects across services that no `projection_applied_events` records, checked by set equality too. */
export interface EffectsReport {
  /** The run's saved search matches every listing (all public, all named with the run's word) exactly once. */
  readonly subscriptionMatches: {
    readonly matched: number;
    readonly missing: Difference;
    readonly unexpected: Difference;
  };
  /** Each order holds exactly one stock reservation in the listing service, and each held reservation one order. */
  readonly reservations: {
    readonly orders: number;
    readonly held: number;
    /** Reservations of checkouts still completing (the order service's recovery job finishes them). */
    readonly inProgress: number;
    /** Orders whose reservation is not held (stock never taken, or released under an order). */
    readonly ordersWithoutReservation: Difference;
    /** Held reservations of no order and no completion in progress (stock taken for nothing). */
    readonly reservationsWithoutOrder: Difference;
    /** Reservation ids reserved more than once, or placed as more than one order. */
    readonly reservedTwice: Difference;
    readonly orderedTwice: Difference;
  };
}

/**
 * What the idempotency keys of the load's writes say, per kind of keyed write: each logical operation (one key,
 * one or more attempts) against the row its service recorded for the key (`<schema>.idempotency_keys`, written
 * in the transaction that created the stream, so a row means the create committed) and, for quick_buy, the
 * orders placed from the key's checkout session.
 */
export interface KeyedWriteReport {
  /** Keyed operations that ended. */
  readonly operations: number;
  /** Operations whose last answer was 2xx. */
  readonly answered: number;
  /** Operations answered 2xx after one or more indefinite answers (a retry with the same key). */
  readonly answeredAfterRetry: number;
  /** Operations that ended on an indefinite answer after their retries (5xx, no answer). */
  readonly unanswered: number;
  /** Keys whose effect exists: a recorded key (publish, quote) or an order placed under the key (quick_buy). */
  readonly effects: number;
  /** Keys with an effect whose client was never told 2xx (reported; not a broken invariant). */
  readonly effectsWithoutAnswer: Difference;
  /** Operations answered 2xx without an effect under their key (must be none). */
  readonly answeredWithoutEffect: Difference;
  /** Operations whose 2xx named another stream than the one their key created (must be none). */
  readonly answeredAnotherStream: Difference;
  /** Recorded keys the load never sent (must be none). */
  readonly unknownKeys: Difference;
  /** Streams (listings, quote requests, orders) that no key created: a create the keys did not hold (must be none). */
  readonly effectsWithoutKey: Difference;
  /** Keys behind more than one stream or order: one key, one effect (must be none). */
  readonly keysWithTwoEffects: Difference;
  /** Operations refused as an idempotency conflict (422): a retry with its own key and body (must be none). */
  readonly conflicts: Difference;
}

export interface KeysReport {
  readonly byWrite: Readonly<Record<KeyedWrite, KeyedWriteReport>>;
  /**
   * Whatever the keys: streams in an event store whose client was never told 2xx, by schema (listing, quote,
   * order: the orders placed, identity: the accounts, which take no key and are not retried).
   */
  readonly unacknowledgedEffects: Readonly<Record<string, Difference>>;
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

const sample = (items: readonly string[]): Difference => ({
  count: items.length,
  sample: items.slice(0, SAMPLE_SIZE),
});

const column = async (db: pg.Pool, sql: string, params: unknown[] = []): Promise<string[]> =>
  (await db.query<{ value: string }>(sql, params)).rows.map((row) => row.value);

const checkProjection = async (db: pg.Pool, projection: Projection): Promise<ProjectionReport> => {
  const { schema, group, source, readModel } = projection;
  const sourceEvents = new Set(
    await column(
      db,
      `select event_id::text as value from ${tableIn(source.schema, 'events')} where stream_type = $1`,
      [source.streamType],
    ),
  );
  const applied = new Set(
    await column(
      db,
      `select event_id as value from ${tableIn(schema, 'projection_applied_events')} where projection = $1`,
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
        `select stream_id, max(version)::text as version from ${tableIn(source.schema, 'events')}
         where stream_type = $1 group by stream_id`,
        [source.streamType],
      )
    ).rows.map((row) => [row.stream_id, row.version]),
  );
  const rows = (
    await db.query<{ stream_id: string; version: string }>(
      `select ${readModel.streamId} as stream_id, ${readModel.version}::text as version
       from ${tableIn(schema, readModel.table)}`,
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

const checkSubscriptionMatches = async (
  db: pg.Pool,
  subscriptionId: string,
  listings: ReadonlySet<string>,
): Promise<EffectsReport['subscriptionMatches']> => {
  const matched = new Set(
    await column(
      db,
      `select product_id as value from ${tableIn('subscription', 'matches')} where subscription_id = $1`,
      [subscriptionId],
    ),
  );
  return {
    matched: matched.size,
    missing: difference(listings, matched),
    unexpected: difference(matched, listings),
  };
};

const LISTING_EVENTS_TABLE = tableIn('listing', 'events');
const ORDER_EVENTS_TABLE = tableIn('order', 'events');

/** Reservation ids are `<checkout id>:<attempt>:<line>` (order's reservationIdOf). */
const checkoutOf = (reservationId: string): string => reservationId.split(':')[0] ?? '';

const checkReservations = async (db: pg.Pool): Promise<EffectsReport['reservations']> => {
  const reservedOf = (type: string) =>
    `select data->>'reservationId' as value from ${LISTING_EVENTS_TABLE} where type = '${type}'`;
  const held = new Set(
    await column(db, `${reservedOf('StockReserved')} except ${reservedOf('StockReleased')}`),
  );
  const placed = `select data->'order'->>'reservationId' as value from ${ORDER_EVENTS_TABLE}
    where type = 'OrderPlaced'`;
  const orders = new Set(await column(db, placed));
  const completing = new Set(
    await column(db, `select checkout_id as value from ${tableIn('order', 'checkout_completions')}`),
  );
  const unordered = [...held].filter((id) => !orders.has(id));
  const twice = (sql: string) =>
    column(db, `select value from (${sql}) ids group by value having count(*) > 1`);
  return {
    orders: orders.size,
    held: held.size,
    inProgress: unordered.filter((id) => completing.has(checkoutOf(id))).length,
    ordersWithoutReservation: difference(orders, held),
    reservationsWithoutOrder: sample(unordered.filter((id) => !completing.has(checkoutOf(id)))),
    reservedTwice: sample(await twice(reservedOf('StockReserved'))),
    orderedTwice: sample(await twice(placed)),
  };
};

const is2xx = (outcome: string): boolean => /^2\d\d$/.test(outcome);

/** Stream ids by key, from a keyed service's `idempotency_keys` table. */
const recordedKeys = async (db: pg.Pool, schema: string): Promise<Map<string, string>> =>
  new Map(
    (
      await db.query<{ key: string; stream_id: string }>(
        `select key, stream_id from ${tableIn(schema, 'idempotency_keys')}`,
      )
    ).rows.map((row) => [row.key, row.stream_id]),
  );

/**
 * The effect streams of a keyed write, each with the stream its key recorded: listings and quote requests are
 * the recorded streams themselves; a quick_buy's key records its checkout session, whose orders are the effect.
 */
const effectStreams = async (db: pg.Pool, write: KeyedWrite): Promise<Map<string, string>> => {
  if (write === 'order') {
    return new Map(
      (
        await db.query<{ stream_id: string; checkout_id: string }>(
          `select stream_id, data->'order'->>'checkoutId' as checkout_id from ${ORDER_EVENTS_TABLE}
           where type = 'OrderPlaced'`,
        )
      ).rows.map((row) => [row.stream_id, row.checkout_id]),
    );
  }
  const schema = SCHEMA_OF_KEYED_WRITE[write];
  const streamType = write === 'publish' ? 'listing' : 'quote';
  const streams = await column(
    db,
    `select distinct stream_id as value from ${tableIn(schema, 'events')} where stream_type = $1`,
    [streamType],
  );
  return new Map(streams.map((stream) => [stream, stream]));
};

const checkKeyedWrite = async (
  db: pg.Pool,
  write: KeyedWrite,
  operations: readonly KeyedOperation[],
): Promise<KeyedWriteReport> => {
  const recorded = await recordedKeys(db, SCHEMA_OF_KEYED_WRITE[write]);
  // effect stream → the stream its key recorded (itself, or the order's checkout session)
  const effects = await effectStreams(db, write);
  const effectsOfRecorded = new Map<string, string[]>();
  for (const [effect, recordedStream] of effects) {
    const list = effectsOfRecorded.get(recordedStream) ?? [];
    effectsOfRecorded.set(recordedStream, [...list, effect]);
  }
  const sent = new Set(operations.map((operation) => operation.key));
  const recordedStreams = new Set(recorded.values());
  const withEffect: KeyedOperation[] = [];
  const withoutAnswer: string[] = [];
  const answeredWithoutEffect: string[] = [];
  const answeredAnother: string[] = [];
  const twice: string[] = [];
  for (const operation of operations) {
    const recordedStream = recorded.get(operation.key);
    const ofKey = recordedStream === undefined ? [] : (effectsOfRecorded.get(recordedStream) ?? []);
    if (ofKey.length > 1) twice.push(`${operation.key} → ${ofKey.join(', ')}`);
    if (ofKey.length > 0) withEffect.push(operation);
    if (ofKey.length > 0 && !is2xx(operation.outcome)) {
      withoutAnswer.push(
        `${operation.key} → ${ofKey.join(', ')} (told ${operation.outcome} after ${operation.attempts})`,
      );
    }
    if (is2xx(operation.outcome) && ofKey.length === 0) answeredWithoutEffect.push(operation.key);
    if (is2xx(operation.outcome) && ofKey.length > 0 && !ofKey.includes(operation.stream ?? '')) {
      answeredAnother.push(`${operation.key}: told ${operation.stream}, created ${ofKey.join(', ')}`);
    }
  }
  const answered = operations.filter((operation) => is2xx(operation.outcome));
  return {
    operations: operations.length,
    answered: answered.length,
    answeredAfterRetry: answered.filter((operation) => operation.attempts > 1).length,
    unanswered: operations.filter((operation) => isIndefinite(operation.outcome)).length,
    effects: withEffect.length,
    effectsWithoutAnswer: sample(withoutAnswer),
    answeredWithoutEffect: sample(answeredWithoutEffect),
    answeredAnotherStream: sample(answeredAnother),
    unknownKeys: difference(recorded.keys(), sent),
    effectsWithoutKey: sample(
      [...effects]
        .filter(([, recordedStream]) => !recordedStreams.has(recordedStream))
        .map(([effect]) => effect),
    ),
    keysWithTwoEffects: sample(twice),
    conflicts: sample(
      operations.filter((operation) => operation.outcome === '422').map((operation) => operation.key),
    ),
  };
};

const checkKeys = async (
  db: pg.Pool,
  keyed: readonly KeyedOperation[],
  acknowledged: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<KeysReport> => {
  const byWrite = {} as Record<KeyedWrite, KeyedWriteReport>;
  for (const write of Object.keys(SCHEMA_OF_KEYED_WRITE) as KeyedWrite[]) {
    byWrite[write] = await checkKeyedWrite(
      db,
      write,
      keyed.filter((operation) => operation.write === write),
    );
  }
  const acknowledgedIn = (schema: string): ReadonlySet<string> => acknowledged.get(schema) ?? new Set();
  const unacknowledgedEffects: Record<string, Difference> = {
    listing: difference((await effectStreams(db, 'publish')).keys(), acknowledgedIn('listing')),
    quote: difference((await effectStreams(db, 'quote')).keys(), acknowledgedIn('quote')),
    order: difference((await effectStreams(db, 'order')).keys(), acknowledgedIn('order')),
    identity: difference(
      await column(
        db,
        `select distinct stream_id as value from ${tableIn('identity', 'events')} where stream_type = 'account'`,
      ),
      acknowledgedIn('identity'),
    ),
  };
  return { byWrite, unacknowledgedEffects };
};

/** Every acknowledged stream id that its event store does not hold. */
const lostWrites = async (
  db: pg.Pool,
  acknowledged: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<Difference> => {
  const lost: string[] = [];
  for (const [schema, streamIds] of acknowledged) {
    const stored = new Set(
      await column(db, `select distinct stream_id as value from ${tableIn(schema, 'events')}`),
    );
    lost.push(...[...streamIds].filter((id) => !stored.has(id)).map((id) => `${schema}:${id}`));
  }
  return sample(lost);
};

/**
 * The promises checked after every fault, by set equality over the whole run so far:
 * every outbox event is on the log (at least once), and the log holds nothing else; every projection applied
 * each source event once and its rows carry their stream's latest version; the effects no projection records
 * (saved-search matches, stock reservations of orders) happened once each; every write the gateway answered
 * 2xx for is in its event store; search finds every listing exactly once.
 */
export const checkInvariants = async (context: {
  readonly db: pg.Pool;
  readonly namespace: string;
  readonly client: MarketplaceClient;
  /** Stream ids of the writes answered 2xx, by the schema of the event store that must hold them. */
  readonly acknowledged: ReadonlyMap<string, ReadonlySet<string>>;
  /** The saved search, made before any listing, that every listing of the run matches. */
  readonly matchingSubscription: string;
  /** Every operation the load sent with an idempotency key, ended (none in flight). */
  readonly keyed: readonly KeyedOperation[];
}): Promise<InvariantReport> => {
  const { db } = context;
  const outboxEvents = new Set<string>();
  const streamNames = new Set<string>();
  for (const outbox of OUTBOXES) {
    const rows = await db.query<{ event_id: string; stream_type: string }>(
      `select event_id::text, stream_type from ${tableIn(outbox.schema, 'events')}`,
    );
    for (const row of rows.rows) {
      outboxEvents.add(row.event_id);
      streamNames.add(streamNameOf(context.namespace, outbox.topic ?? row.stream_type));
    }
  }
  const onLog = await readLogEventIds([...streamNames]);
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
    await column(
      db,
      `select distinct stream_id as value from ${LISTING_EVENTS_TABLE} where stream_type = 'listing'`,
    ),
  );
  const writes = {
    acknowledged: Object.fromEntries([...context.acknowledged].map(([schema, ids]) => [schema, ids.size])),
    lost: await lostWrites(db, context.acknowledged),
  };
  const effects: EffectsReport = {
    subscriptionMatches: await checkSubscriptionMatches(db, context.matchingSubscription, streams),
    reservations: await checkReservations(db),
  };
  const keys = await checkKeys(db, context.keyed, context.acknowledged);

  const found = (await context.client.searchAll(RUN_WORD)).map((product) => product.id);
  const seen = new Set<string>();
  const duplicates = found.filter((id) => seen.has(id) || !seen.add(id));
  const search = {
    found: found.length,
    duplicates: { count: duplicates.length, sample: duplicates.slice(0, SAMPLE_SIZE) },
    missing: difference(streams, seen),
    unexpected: difference(seen, streams),
  };

  const { subscriptionMatches: matches, reservations } = effects;
  const passed =
    noDifference(outbox.missingFromLog, outbox.notInOutbox, writes.lost) &&
    projections.every((p) =>
      noDifference(p.notApplied, p.appliedUnknown, p.staleRows, p.missingRows, p.foreignRows),
    ) &&
    noDifference(matches.missing, matches.unexpected) &&
    noDifference(
      reservations.ordersWithoutReservation,
      reservations.reservationsWithoutOrder,
      reservations.reservedTwice,
      reservations.orderedTwice,
    ) &&
    noDifference(search.duplicates, search.missing, search.unexpected) &&
    Object.values(keys.byWrite).every((k) =>
      noDifference(
        k.answeredWithoutEffect,
        k.answeredAnotherStream,
        k.unknownKeys,
        k.effectsWithoutKey,
        k.keysWithTwoEffects,
        k.conflicts,
      ),
    );
  return { passed, outbox, projections, writes, effects, keys, search };
};
