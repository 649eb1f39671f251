import type pg from 'pg';
import type { Cluster } from '../src/harness/cluster.js';
import { eventually } from '../src/harness/processes.js';
import { natsServer } from './nats-server.js';
import { pause } from './steady-load.js';
import {
  CONSUMERS,
  DATABASE_CLIENTS,
  KILLED_SERVICES,
  OUTBOXES,
  type Outbox,
  type ServiceName,
  tableIn,
} from './topology.js';

export interface FaultContext {
  readonly cluster: Cluster;
  /** The cluster's database, as the PostgreSQL superuser (to lock rows and terminate backends). */
  readonly db: pg.Pool;
  readonly databaseName: string;
  /** The consumers' EVENT_LOG_ACK_WAIT_MS. */
  readonly ackWaitMs: number;
  /** Makes the outbox of `service` append an event now (a listing, an account, a quote request...). */
  readonly appendEventThrough: (service: ServiceName) => Promise<void>;
}

/** What a fault did, for the report (e.g. whether a transaction was caught open). */
export type FaultNotes = Record<string, string | number | boolean>;

export interface Fault {
  /** `<kind>:<target>`, e.g. `kill:catalog`. */
  readonly name: string;
  /** Breaks something and restarts what it killed; the campaign then waits until the cluster is ready. */
  inject(context: FaultContext): Promise<FaultNotes>;
  /** The load must see no 500 during this fault: what it breaks is transient and answered 503. */
  readonly noInternalErrors?: boolean;
}

/**
 * kill -9 and restart. With `replicas` processes of the service, one of them, each in turn (`catalog`,
 * `catalog-2`, `catalog`...): the others keep serving.
 */
export const killService = (service: ServiceName, replicas = 1): Fault => {
  let injected = 0;
  return {
    name: `kill:${service}`,
    inject: async ({ cluster }): Promise<FaultNotes> => {
      const n = (injected++ % replicas) + 1;
      const name = n === 1 ? service : `${service}-${n}`;
      await cluster.process(name).stop('SIGKILL');
      cluster.process(name).start();
      return replicas === 1 ? {} : { killed: name };
    },
  };
};

const backendsOf = `from pg_stat_activity where datname = $1 and application_name = $2 and pid <> pg_backend_pid()`;

const terminateBackends = async (db: pg.Pool, databaseName: string, service: ServiceName): Promise<number> =>
  (await db.query(`select pg_terminate_backend(pid) ${backendsOf}`, [databaseName, service])).rowCount ?? 0;

/**
 * Crashes a relay in its narrowest window: the batch is on the log but its checkpoint is not saved. The
 * checkpoints table is held locked against updates, an event is appended, and once the relay waits on the lock (after publishing)
 * its process is killed, and its backend with it, as a crash of the whole host would.
 */
export const crashRelay = (outbox: Outbox): Fault => ({
  name: `relay-crash:${outbox.relay}`,
  inject: async ({ cluster, db, databaseName, appendEventThrough }) => {
    const lock = await db.connect();
    try {
      await lock.query('begin');
      // A table lock, not a row lock: it takes no transaction id, so it holds back no relay's xmin horizon.
      await lock.query(`lock table ${tableIn(outbox.schema, 'outbox_checkpoints')} in share mode`);
      await appendEventThrough(outbox.service);
      await eventually(
        async () =>
          (
            await db.query(
              `select pid ${backendsOf} and wait_event_type = 'Lock' and query ilike '%outbox_checkpoints%'`,
              [databaseName, outbox.service],
            )
          ).rowCount
            ? true
            : undefined,
        { timeoutMs: 15_000, describe: () => `the ${outbox.relay} relay never reached its checkpoint` },
      );
      await cluster.process(outbox.service).stop('SIGKILL');
      const terminated = await terminateBackends(db, databaseName, outbox.service);
      return { publishedNotCheckpointed: true, backendsTerminated: terminated };
    } finally {
      await lock.query('rollback').catch(() => undefined);
      lock.release();
      if (!cluster.process(outbox.service).running) cluster.process(outbox.service).start();
    }
  },
});

/** kill -9 of the NATS server, down for `downMs`, then started again. */
export const crashNats = (downMs = 1_000): Fault => ({
  name: 'kill:nats-server',
  inject: async () => {
    await natsServer.crash(downMs);
    return { downMs };
  },
});

/** SIGSTOP past the ack deadline, so JetStream hands the message in hand out again, then SIGCONT. */
export const pauseConsumer = (service: ServiceName): Fault => ({
  name: `pause:${service}`,
  inject: async ({ cluster, ackWaitMs }) => {
    const pausedMs = ackWaitMs + 1_500;
    cluster.process(service).signal('SIGSTOP');
    try {
      await pause(pausedMs);
    } finally {
      cluster.process(service).signal('SIGCONT');
    }
    return { pausedMs };
  },
});

/**
 * pg_terminate_backend on every connection of the service, at a moment one of them is inside a transaction
 * (BEGIN sent, COMMIT not yet) when that can be caught within a few seconds.
 */
export const dropDatabaseConnections = (service: ServiceName): Fault => ({
  name: `db-drop:${service}`,
  noInternalErrors: true,
  inject: async ({ db, databaseName }) => {
    const deadline = Date.now() + 3_000;
    let midTransaction = false;
    while (!midTransaction && Date.now() < deadline) {
      const open = await db.query(`select pid ${backendsOf} and state = 'idle in transaction'`, [
        databaseName,
        service,
      ]);
      midTransaction = (open.rowCount ?? 0) > 0;
    }
    const terminated = await terminateBackends(db, databaseName, service);
    return { midTransaction, backendsTerminated: terminated };
  },
});

/**
 * Every fault of the topology: one per killed service, outbox relay, consumer and database client. With
 * `replicas` > 1 (every service that many processes) the kills take one replica each, and the relay crashes are
 * left out: the relay runs in whichever replica holds its lock, and the fault kills the first.
 */
export const allFaults = (options: { includeNats: boolean; replicas?: number }): Fault[] => [
  ...KILLED_SERVICES.map((service) => killService(service, options.replicas)),
  ...((options.replicas ?? 1) > 1 ? [] : OUTBOXES.map(crashRelay)),
  ...CONSUMERS.map(pauseConsumer),
  ...DATABASE_CLIENTS.map(dropDatabaseConnections),
  ...(options.includeNats ? [crashNats()] : []),
];

/** Whether `entry` of an --only list names the fault: its whole name, its kind (`db-drop:`) or its target. */
const selects = (entry: string, name: string): boolean =>
  name === entry || (entry.endsWith(':') && name.startsWith(entry)) || name.endsWith(`:${entry}`);

/** The faults a comma-separated list selects (all without one); an entry that selects nothing is an error. */
export const selectFaults = (faults: readonly Fault[], only: string | undefined): Fault[] => {
  if (only === undefined) return [...faults];
  const entries = only
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const unknown = entries.filter((entry) => !faults.some((fault) => selects(entry, fault.name)));
  if (unknown.length > 0) throw new Error(`--only: no fault is named ${unknown.join(', ')}`);
  return faults.filter((fault) => entries.some((entry) => selects(entry, fault.name)));
};
