import { cpus, loadavg, totalmem } from 'node:os';
import pg from 'pg';
import { Cluster } from '../src/harness/cluster.js';
import type { Fault, FaultNotes } from './faults.js';
import { checkInvariants, type InvariantReport } from './invariants.js';
import { natsServer } from './nats-server.js';
import { pause, SteadyLoad, type LoadTally } from './steady-load.js';
import type { ServiceName } from './topology.js';

export interface CampaignOptions {
  readonly faults: readonly Fault[];
  /** Cycles of each fault (the faults take turns: cycle 1 of each, then cycle 2 of each, …). */
  readonly cycles: number;
  readonly load: { readonly workers: number; readonly pauseMs: number; readonly accountEvery: number };
  /** EVENT_LOG_ACK_WAIT_MS of the cluster (the pause faults outlast it). */
  readonly ackWaitMs: number;
  /** Load before the fault, and after recovery before the check. */
  readonly loadBeforeMs: number;
  readonly loadAfterMs: number;
  /** How long the invariants may take to hold once the load stopped. */
  readonly convergeTimeoutMs: number;
  readonly progress?: (message: string) => void;
}

export interface CycleResult {
  readonly fault: string;
  readonly cycle: number;
  readonly passed: boolean;
  readonly notes: FaultNotes;
  /** What the write load saw from just before the fault until just before the check. */
  readonly load: LoadTally;
  /** From the fault's start until every service and the gateway were ready again. */
  readonly recoveryMs: number;
  /** From the end of the load until the invariants held (or the timeout). */
  readonly convergenceMs: number;
  readonly invariants?: InvariantReport;
  /**
   * Availability trouble on the way back (not a broken invariant): a readiness wait that timed out, a process
   * that exited after its restart (with the end of its output). Each is followed by restarting what exited.
   */
  readonly incidents: readonly string[];
  readonly error?: string;
}

export interface FaultSummary {
  readonly cycles: number;
  readonly passed: number;
  readonly recoveryMsMax: number;
  readonly incidents: number;
  readonly convergenceMsMax: number;
  readonly writesAcknowledged: number;
  readonly writesRefused: number;
}

export interface CampaignReport {
  readonly startedAt: string;
  readonly durationMs: number;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly loadAverageAtEnd: number[];
  };
  readonly options: Omit<CampaignOptions, 'faults' | 'progress'> & { readonly faults: string[] };
  readonly passed: boolean;
  readonly totals: {
    readonly cycles: number;
    readonly failedCycles: number;
    readonly listingsAcknowledged: number;
    readonly accountsAcknowledged: number;
  };
  readonly summary: Record<string, FaultSummary>;
  readonly cycles: readonly CycleResult[];
}

const acknowledged = (tally: LoadTally): number =>
  Object.entries(tally.outcomes)
    .filter(([outcome]) => /^2\d\d$/.test(outcome))
    .reduce((sum, [, count]) => sum + count, 0);

const summarise = (cycles: readonly CycleResult[]): Record<string, FaultSummary> => {
  const summary: Record<string, FaultSummary> = {};
  for (const cycle of cycles) {
    const previous = summary[cycle.fault] ?? {
      cycles: 0,
      passed: 0,
      recoveryMsMax: 0,
      incidents: 0,
      convergenceMsMax: 0,
      writesAcknowledged: 0,
      writesRefused: 0,
    };
    const ok = acknowledged(cycle.load);
    summary[cycle.fault] = {
      cycles: previous.cycles + 1,
      passed: previous.passed + (cycle.passed ? 1 : 0),
      recoveryMsMax: Math.max(previous.recoveryMsMax, cycle.recoveryMs),
      incidents: previous.incidents + cycle.incidents.length,
      convergenceMsMax: Math.max(previous.convergenceMsMax, cycle.convergenceMs),
      writesAcknowledged: previous.writesAcknowledged + ok,
      writesRefused: previous.writesRefused + cycle.load.attempts - ok,
    };
  }
  return summary;
};

/**
 * Runs each fault `cycles` times against one cluster (one process per service, the local PostgreSQL and NATS)
 * under steady write load through the gateway, and checks the invariants after each. NATS is always left
 * running, whatever happens.
 */
export const runCampaign = async (options: CampaignOptions): Promise<CampaignReport> => {
  const progress = options.progress ?? (() => undefined);
  const started = Date.now();
  const cluster = await Cluster.start({ env: { EVENT_LOG_ACK_WAIT_MS: String(options.ackWaitMs) } });
  const databaseName = new URL(cluster.databaseUrl).pathname.slice(1);
  const db = new pg.Pool({
    connectionString: cluster.databaseUrl,
    max: 4,
    application_name: 'fault-injector',
  });
  const cycles: CycleResult[] = [];
  // Whatever ends this process (a signal, a crash), the cluster's processes must not outlive it.
  const killCluster = (): void => {
    for (const process of cluster.processes.values()) if (process.running) process.signal('SIGKILL');
  };
  process.once('exit', killCluster);
  try {
    const admin = cluster.adminClient();
    const sellerKey = (await admin.createAccount('seller', 'Fault Run Seller')).apiKey;
    const load = new SteadyLoad(cluster, sellerKey, options.load);
    const context = {
      cluster,
      db,
      databaseName,
      ackWaitMs: options.ackWaitMs,
      appendEventThrough: async (service: ServiceName): Promise<void> => {
        if (service === 'gateway') {
          load.acknowledgedAccounts.add((await admin.createAccount('buyer', 'Relay Crash Buyer')).accountId);
          return;
        }
        const published = await cluster.client.publish(sellerKey, {
          name: 'quillhaven relay crate',
          description: 'Published while the relay is held at its checkpoint',
          imageUrl: cluster.images.imageUrl('relay'),
          promotePublicly: true,
        });
        if (published.status !== 201) throw new Error(`publish answered ${published.status}`);
        load.acknowledgedListings.add(published.body.id);
      },
    };

    for (let cycle = 1; cycle <= options.cycles; cycle++) {
      for (const fault of options.faults) {
        load.start();
        let notes: FaultNotes = {};
        let recoveryMs = 0;
        let error: string | undefined;
        const incidents: string[] = [];
        try {
          await pause(options.loadBeforeMs);
          const faultStarted = Date.now();
          notes = await fault.inject(context);
          await recover(cluster, incidents);
          recoveryMs = Date.now() - faultStarted;
          await pause(options.loadAfterMs);
        } catch (caught) {
          error = caught instanceof Error ? caught.message : String(caught);
        }
        const tally = await load.stop();
        if (error !== undefined) {
          progress(`${fault.name} #${cycle}: ${error.slice(0, 2_000)}`);
          // Still not back after three rounds: the checks below then say what that cost.
          await recover(cluster, incidents).catch(() => undefined);
        }
        for (const incident of incidents) progress(`${fault.name} #${cycle} incident: ${incident}`);
        const converging = Date.now();
        const invariants = await converge(options.convergeTimeoutMs, () =>
          checkInvariants({
            db,
            namespace: cluster.namespace,
            client: cluster.client,
            acknowledgedListings: load.acknowledgedListings,
            acknowledgedAccounts: load.acknowledgedAccounts,
          }),
        ).catch((caught: unknown) => {
          error ??= `checking the invariants failed: ${String(caught)}`;
          return undefined;
        });
        const result: CycleResult = {
          fault: fault.name,
          cycle,
          passed: error === undefined && invariants?.passed === true,
          notes,
          load: tally,
          recoveryMs,
          convergenceMs: Date.now() - converging,
          ...(invariants ? { invariants } : {}),
          incidents,
          ...(error === undefined ? {} : { error }),
        };
        cycles.push(result);
        progress(
          `${result.passed ? 'ok  ' : 'FAIL'} ${fault.name} #${cycle}: recovered in ${recoveryMs} ms, ` +
            `converged in ${result.convergenceMs} ms, writes ${JSON.stringify(tally.outcomes)}, ` +
            `${invariants?.outbox.events ?? '?'} events ${JSON.stringify(notes)}`,
        );
      }
    }
  } finally {
    natsServer.ensureRunning();
    await db.end();
    await cluster.stop();
    process.removeListener('exit', killCluster);
  }
  const failedCycles = cycles.filter((cycle) => !cycle.passed).length;
  const last = cycles.at(-1)?.invariants;
  const { faults, progress: _progress, ...rest } = options;
  return {
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverageAtEnd: loadavg().map((value) => Math.round(value * 100) / 100),
    },
    options: { ...rest, faults: faults.map((fault) => fault.name) },
    passed: failedCycles === 0 && cycles.length === faults.length * options.cycles,
    totals: {
      cycles: cycles.length,
      failedCycles,
      listingsAcknowledged: last?.writes.acknowledgedListings ?? 0,
      accountsAcknowledged: last?.writes.acknowledgedAccounts ?? 0,
    },
    summary: summarise(cycles),
    cycles,
  };
};

/** Re-checks until the invariants hold or the time is up; answers the last report either way. */
const converge = async (
  timeoutMs: number,
  check: () => Promise<InvariantReport>,
): Promise<InvariantReport> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const report = await check().catch((error: unknown) => {
      if (Date.now() >= deadline) throw error;
      return undefined;
    });
    if (report?.passed || (report && Date.now() >= deadline)) return report;
    await pause(500);
  }
};

const RECOVERY_ATTEMPTS = 3;

/**
 * Waits until every process runs, is not stopped and serves, and NATS is up. A readiness wait that times out
 * or a process found exited is an incident (kept with the end of the process's output); what exited is
 * started again, up to three rounds.
 */
const recover = async (cluster: Cluster, incidents: string[]): Promise<void> => {
  natsServer.ensureRunning();
  for (let attempt = 1; ; attempt++) {
    for (const process of cluster.processes.values()) {
      if (process.running) {
        process.signal('SIGCONT');
      } else {
        incidents.push(`${process.name} had exited; its output ended with: ${process.logs.slice(-1_500)}`);
        process.start();
      }
    }
    try {
      await cluster.waitUntilReady();
      return;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      incidents.push(`not ready (attempt ${attempt}): ${message.slice(0, 1_500)}`);
      if (attempt === RECOVERY_ATTEMPTS) throw error;
    }
  }
};
