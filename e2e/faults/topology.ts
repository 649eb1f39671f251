import type { BackendService } from '../src/harness/cluster.js';

/** A process of the cluster that can be killed and restarted. */
export type ServiceName = BackendService | 'gateway';

/**
 * What the fault runs know about the marketplace's event flow. Each service that is added (quotes, orders,
 * subscriptions) joins by one line in each table that applies to it: the invariants and the faults are derived
 * from these tables only.
 */

/** Services killed with SIGKILL and restarted under load. */
export const KILLED_SERVICES: readonly ServiceName[] = ['listing', 'catalog', 'gateway'];

/** An event store whose events table is also the outbox, and the relay (inside `service`) that publishes it. */
export interface Outbox {
  readonly service: ServiceName;
  readonly schema: string;
  /** The relay's name: its row in `outbox_checkpoints`. */
  readonly relay: string;
}

export const OUTBOXES: readonly Outbox[] = [
  { service: 'listing', schema: 'listing', relay: 'listing' },
  { service: 'gateway', schema: 'identity', relay: 'gateway' },
];

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
];

/** Services whose consumers can be paused past their ack deadline. */
export const CONSUMERS: readonly ServiceName[] = [...new Set(PROJECTIONS.map((p) => p.service))];

/** Services with PostgreSQL connections (every one here: application_name is the service name). */
export const DATABASE_CLIENTS: readonly ServiceName[] = ['listing', 'catalog', 'gateway'];
