import { cpus, loadavg, totalmem } from 'node:os';
import pg from 'pg';
import { BACKEND_SERVICES, Cluster } from '../src/harness/cluster.js';
import type { Fault, FaultNotes } from './faults.js';
import { checkInvariants, type InvariantReport } from './invariants.js';
import { natsServer } from './nats-server.js';
import { pause, RETRY, SteadyLoad, type LoadMix, type LoadTally } from './steady-load.js';
import type { ServiceName } from './topology.js';

export interface CampaignOptions {
  readonly faults: readonly Fault[];
  /** Cycles of each fault (the faults take turns: cycle 1 of each, then cycle 2 of each, …). */
  readonly cycles: number;
  readonly load: LoadMix;
  /** EVENT_LOG_ACK_WAIT_MS of the cluster (the pause faults outlast it). */
  readonly ackWaitMs: number;
  /** Load before the fault, and after recovery before the check. */
  readonly loadBeforeMs: number;
  readonly loadAfterMs: number;
  /** How long the invariants may take to hold once the load stopped. */
  readonly convergeTimeoutMs: number;
  /**
   * Processes of every service and of the gateway (default 1). With more, a cycle also fails when a search
   * failed after its one retry, or a keyed write needed more than one retry (`LoadTally.beyondOneRetry`).
   */
  readonly replicas?: number;
  readonly progress?: (message: string) => void;
  /** After each round (every fault once), the report so far: a run stopped early keeps its results. */
  readonly onRound?: (report: CampaignReport) => Promise<void>;
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
  /** The machine's 1-minute load average at the end of the cycle (the machine is shared). */
  readonly loadAverage: number;
}

export interface FaultSummary {
  readonly cycles: number;
  readonly passed: number;
  readonly recoveryMsMax: number;
  readonly incidents: number;
  readonly convergenceMsMax: number;
  readonly writesAcknowledged: number;
  readonly writesRefused: number;
  /** Answers of 500 (a fault reaching a client as an internal error instead of a 503). */
  readonly internalErrors: number;
  /**
   * The load's logical operations (a keyed write and its retries with the same key count once): how many ended,
   * how many ended on a 2xx, how many needed a retry, and how many ended without a definitive answer.
   * `writesAcknowledged` and `writesRefused` above count attempts (every request), as in the runs before keys.
   */
  readonly operations: number;
  readonly operationsAcknowledged: number;
  readonly operationsRetried: number;
  readonly operationsUnanswered: number;
  /** Keyed operations a client with one retry would not have completed (see `LoadTally`). */
  readonly operationsBeyondOneRetry: number;
  readonly searches: number;
  readonly searchesRetried: number;
  readonly searchesFailed: number;
}

export interface CampaignReport {
  readonly startedAt: string;
  readonly durationMs: number;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly loadAverageAtStart: number[];
    readonly loadAverageAtEnd: number[];
  };
  readonly options: Omit<CampaignOptions, 'faults' | 'progress' | 'onRound'> & {
    readonly faults: string[];
    /** How the load retried its keyed writes (in the reports since the keyed load's final settings). */
    readonly retry: typeof RETRY;
  };
  readonly passed: boolean;
  readonly totals: {
    readonly cycles: number;
    readonly failedCycles: number;
    /** 2xx'd writes over the whole run, by event store (schema). */
    readonly writesAcknowledged: Readonly<Record<string, number>>;
    /**
     * At the last check, over the whole run: per keyed write, its operations, how many were answered 2xx (after
     * a retry), unanswered, had an effect, and had an effect whose client was never told 2xx; and per event
     * store, the streams whose client was never told 2xx (accounts take no key).
     */
    readonly keys?: {
      readonly byWrite: Record<string, Record<string, number>>;
      readonly unacknowledgedEffects: Record<string, number>;
    };
  };
  readonly summary: Record<string, FaultSummary>;
  readonly cycles: readonly CycleResult[];
}

const loadAverages = (): number[] => loadavg().map((value) => Math.round(value * 100) / 100);

const countOf2xx = (outcomes: Record<string, number>): number =>
  Object.entries(outcomes)
    .filter(([outcome]) => /^2\d\d$/.test(outcome))
    .reduce((sum, [, count]) => sum + count, 0);

const acknowledged = (tally: LoadTally): number => countOf2xx(tally.outcomes);

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
      internalErrors: 0,
      operations: 0,
      operationsAcknowledged: 0,
      operationsRetried: 0,
      operationsUnanswered: 0,
      operationsBeyondOneRetry: 0,
      searches: 0,
      searchesRetried: 0,
      searchesFailed: 0,
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
      internalErrors: previous.internalErrors + (cycle.load.outcomes['500'] ?? 0),
      operations: previous.operations + cycle.load.operations,
      operationsAcknowledged: previous.operationsAcknowledged + countOf2xx(cycle.load.finalOutcomes),
      operationsRetried: previous.operationsRetried + cycle.load.retried,
      operationsUnanswered: previous.operationsUnanswered + cycle.load.unanswered,
      operationsBeyondOneRetry: previous.operationsBeyondOneRetry + cycle.load.beyondOneRetry,
      searches: previous.searches + cycle.load.searches.sent,
      searchesRetried: previous.searchesRetried + cycle.load.searches.retried,
      searchesFailed: previous.searchesFailed + cycle.load.searches.failed,
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
  const loadAverageAtStart = loadAverages();
  const replicas = options.replicas ?? 1;
  const cluster = await Cluster.start({
    env: { EVENT_LOG_ACK_WAIT_MS: String(options.ackWaitMs) },
    replicas: Object.fromEntries(
      [...BACKEND_SERVICES, 'gateway' as const].map((service) => [service, replicas]),
    ),
  });
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
    const seller = await admin.createAccount('seller', 'Fault Run Seller');
    const buyer = await admin.createAccount('buyer', 'Fault Run Buyer');
    const load = new SteadyLoad(cluster, { sellerKey: seller.apiKey, buyerKey: buyer.apiKey }, options.load);
    for (const { accountId } of [seller, buyer]) load.acknowledge('identity', `account_${accountId}`);
    const matchingSubscription = await load.subscribeToRun();
    const context = {
      cluster,
      db,
      databaseName,
      ackWaitMs: options.ackWaitMs,
      appendEventThrough: (service: ServiceName) => load.writeThrough(service),
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
            acknowledged: load.acknowledged,
            matchingSubscription,
            keyed: load.keyed,
          }),
        ).catch((caught: unknown) => {
          error ??= `checking the invariants failed: ${String(caught)}`;
          return undefined;
        });
        const internalErrors = tally.outcomes['500'] ?? 0;
        if (fault.noInternalErrors && internalErrors > 0) {
          error ??= `${internalErrors} answers of 500 during a fault that is transient (503 expected)`;
        }
        if (replicas > 1 && tally.searches.failed > 0) {
          error ??= `${tally.searches.failed} searches failed after one retry while another replica served`;
        }
        if (replicas > 1 && tally.beyondOneRetry > 0) {
          error ??= `${tally.beyondOneRetry} keyed writes needed more than one retry while another replica served`;
        }
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
          loadAverage: loadAverages()[0] ?? 0,
        };
        cycles.push(result);
        progress(
          `${result.passed ? 'ok  ' : 'FAIL'} ${fault.name} #${cycle}: recovered in ${recoveryMs} ms, ` +
            `converged in ${result.convergenceMs} ms, writes ${JSON.stringify(tally.outcomes)}, ` +
            `operations ${JSON.stringify(tally.finalOutcomes)} (${tally.retried} retried, ` +
            `${tally.beyondOneRetry} beyond one retry), searches ${JSON.stringify(tally.searches)}, ` +
            `${invariants?.outbox.events ?? '?'} events ${JSON.stringify(notes)}, load ${result.loadAverage}`,
        );
      }
      await options.onRound?.(reportOf(options, started, loadAverageAtStart, cycles));
    }
  } finally {
    natsServer.ensureRunning();
    await db.end();
    await cluster.stop();
    process.removeListener('exit', killCluster);
  }
  return reportOf(options, started, loadAverageAtStart, cycles);
};

/** The campaign's report so far: a run cut short (or a round's `onRound`) still says what it saw. */
const reportOf = (
  options: CampaignOptions,
  started: number,
  loadAverageAtStart: number[],
  cycles: readonly CycleResult[],
): CampaignReport => {
  const failedCycles = cycles.filter((cycle) => !cycle.passed).length;
  const last = cycles.at(-1)?.invariants;
  const { faults, progress: _progress, onRound: _onRound, ...rest } = options;
  return {
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverageAtStart,
      loadAverageAtEnd: loadAverages(),
    },
    options: { ...rest, faults: faults.map((fault) => fault.name), retry: RETRY },
    passed: failedCycles === 0 && cycles.length === faults.length * options.cycles,
    totals: {
      cycles: cycles.length,
      failedCycles,
      writesAcknowledged: last?.writes.acknowledged ?? {},
      ...(last
        ? {
            keys: {
              byWrite: Object.fromEntries(
                Object.entries(last.keys.byWrite).map(([write, report]) => [
                  write,
                  {
                    operations: report.operations,
                    answered: report.answered,
                    answeredAfterRetry: report.answeredAfterRetry,
                    unanswered: report.unanswered,
                    effects: report.effects,
                    effectsWithoutAnswer: report.effectsWithoutAnswer.count,
                  },
                ]),
              ),
              unacknowledgedEffects: Object.fromEntries(
                Object.entries(last.keys.unacknowledgedEffects).map(([schema, d]) => [schema, d.count]),
              ),
            },
          }
        : {}),
    },
    summary: summarise(cycles),
    cycles: [...cycles],
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
