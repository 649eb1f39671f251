import type { BackendService } from '../src/harness/cluster.js';

/** A process of the cluster that can be killed and restarted. */
export type ServiceName = BackendService | 'gateway';

/**
 * What the fault runs know about the marketplace's event flow. Each service joins by one line in each table
 * that applies to it: the invariants and the faults are derived from these tables only.
 */

/** Services killed with SIGKILL and restarted under load. */
export const KILLED_SERVICES: readonly ServiceName[] = [
  'listing',
  'catalog',
  'gateway',
  'quote',
  'order',
  'subscription',
];

/** An event store whose events table is also the outbox, and the relay (inside `service`) that publishes it. */
export interface Outbox {
  readonly service: ServiceName;
  readonly schema: string;
  /** The relay's name: its row in `outbox_checkpoints`. */
  readonly relay: string;
  /** Every stream type on one topic, `marketplace.<topic>.v1` (default: a topic per stream type). */
  readonly topic?: string;
}

export const OUTBOXES: readonly Outbox[] = [
  { service: 'listing', schema: 'listing', relay: 'listing' },
  { service: 'gateway', schema: 'identity', relay: 'gateway' },
  { service: 'quote', schema: 'quote', relay: 'quote' },
  // Orders and checkout sessions alike, all on marketplace.order.v1.
  { service: 'order', schema: 'order', relay: 'order', topic: 'order' },
  { service: 'subscription', schema: 'subscription', relay: 'subscription' },
];

/** `schema.table` for SQL, the schema quoted: `order` is a reserved word. */
export const tableIn = (schema: string, table: string): string => `"${schema}".${table}`;

/** A read model kept by `startProjection`: one row per source stream carrying the stream version it reflects. */
export interface ReadModel {
  readonly table: string;
  /** SQL giving the source stream id of a row, e.g. `product_id` or `'account_' || account_id`. */
  readonly streamId: string;
  readonly version: string;
  /** True when every source stream has a row (false: the projection keeps some streams only). */
  readonly everyStream: boolean;
}

/** A consumer group applying one stream type's events in `schema` (with `projection_applied_events`). */
export interface Projection {
  readonly service: ServiceName;
  readonly schema: string;
  readonly group: string;
  readonly source: { readonly schema: string; readonly streamType: string };
  readonly readModel?: ReadModel;
}

const LISTING_EVENTS = { schema: 'listing', streamType: 'listing' } as const;
const ACCOUNT_EVENTS = { schema: 'identity', streamType: 'account' } as const;
const QUOTE_EVENTS = { schema: 'quote', streamType: 'quote' } as const;

export const PROJECTIONS: readonly Projection[] = [
  {
    service: 'catalog',
    schema: 'catalog',
    group: 'catalog-search-projection',
    source: LISTING_EVENTS,
    readModel: { table: 'products', streamId: 'product_id', version: 'version', everyStream: true },
  },
  {
    service: 'catalog',
    schema: 'catalog',
    group: 'catalog-seller-projection',
    source: ACCOUNT_EVENTS,
    // Sellers only: buyers' accounts leave no row.
    readModel: {
      table: 'sellers',
      streamId: `'account_' || account_id`,
      version: 'version',
      everyStream: false,
    },
  },
  {
    service: 'listing',
    schema: 'listing',
    group: 'listing-staleness',
    source: LISTING_EVENTS,
    readModel: {
      table: 'listing_confirmations',
      streamId: 'product_id',
      version: 'version',
      everyStream: true,
    },
  },
  { service: 'listing', schema: 'listing', group: 'listing-seller-contacts', source: ACCOUNT_EVENTS },
  {
    service: 'quote',
    schema: 'quote',
    group: 'quote-listing-snapshots',
    source: LISTING_EVENTS,
    readModel: { table: 'listing_snapshots', streamId: 'product_id', version: 'version', everyStream: true },
  },
  { service: 'quote', schema: 'quote', group: 'quote-seller-contacts', source: ACCOUNT_EVENTS },
  { service: 'order', schema: 'order', group: 'order-seller-contacts', source: ACCOUNT_EVENTS },
  // order-seller-notices and subscription-seller-order-events read marketplace.order.v1, which carries checkout
  // streams too: their applied events are not one stream type's, so they are not listed here.
  {
    service: 'subscription',
    schema: 'subscription',
    group: 'subscription-seller-quote-events',
    source: QUOTE_EVENTS,
  },
  // Its effect is an email, sent at least once by design (a crash between send and commit sends it again with
  // the same Message-ID); what is exactly once is the record of the event as applied, checked here.
  { service: 'quote', schema: 'quote', group: 'quote-notifications', source: QUOTE_EVENTS },
  // The matcher's effect (one `matches` row per listing and saved search) is checked in invariants.ts.
  { service: 'subscription', schema: 'subscription', group: 'subscription-matcher', source: LISTING_EVENTS },
  // `sellers.version` is the account's creation event, not its latest: no row-version check.
  {
    service: 'subscription',
    schema: 'subscription',
    group: 'subscription-seller-countries',
    source: ACCOUNT_EVENTS,
  },
];

/** Services whose consumers can be paused past their ack deadline. */
export const CONSUMERS: readonly ServiceName[] = [...new Set(PROJECTIONS.map((p) => p.service))];

/** Services with PostgreSQL connections (every one here: application_name is the service name). */
export const DATABASE_CLIENTS: readonly ServiceName[] = KILLED_SERVICES;
