import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Cluster } from '@marketplace/e2e';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where a cluster scenario's CPU goes: the CPU time (user + system, from Linux's /proc) that each process of the
 * run spent between two snapshots, per operation. On a 2-core machine every layer (gateway, services, the
 * consumers of the same events, PostgreSQL, NATS, the load generator) shares the same cores, so the sum of
 * these figures is what one operation costs the machine, and 2 cores divided by it is the ceiling of the run.
 */

/** Which processes to account for, under the names the figures carry. */
export interface CpuTargets {
  /** Process ids by name (the cluster's services). */
  readonly pids: ReadonlyMap<string, number>;
  /** PostgreSQL backends serving this database (`postgres: <cluster> <user> <database> ...`) count as `postgres`. */
  readonly database?: string;
  /** Whether the NATS server counts, as `nats` (it is shared with the machine: other work shows there too). */
  readonly nats?: boolean;
}

export interface CpuShare {
  /** CPU seconds per wall second: 1 is one core busy for the whole window. */
  readonly cores: number;
  /** CPU milliseconds per operation. */
  readonly msPerOperation: number;
}

/**
 * The CPU each process of the run spent, and three sums: `run` (every process of the marketplace: services,
 * PostgreSQL backends, NATS; the figure per operation), `load generator` (this process, apart) and `foreign`
 * (the rest of the machine in the same window, from /proc/stat: other work on the host, which slows the run).
 */
export type CpuFigures = Record<string, CpuShare> & {
  readonly run: CpuShare;
  readonly 'load generator': CpuShare;
  readonly foreign: CpuShare;
};

export interface CpuMeter {
  /** The CPU each process spent since the meter started, for `operations` operations; the meter runs on. */
  read(operations: number): Promise<CpuFigures>;
  /** The same, and the profile's recording (if any) ends. */
  stop(operations: number): Promise<CpuFigures>;
}

/** Busy CPU time of the whole machine in clock ticks (/proc/stat: every state but idle and iowait). */
const machineBusyTicks = async (): Promise<number> => {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return [user, nice, system, irq, softirq, steal].reduce<number>((sum, ticks) => sum + (ticks ?? 0), 0);
};

const clockTicksPerSecond = (): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
};

/** utime + stime of a process in clock ticks; undefined once it is gone. */
const ticksOf = async (pid: number): Promise<number | undefined> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  // Fields after the command name, which is in parentheses and may itself hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
};

const commandOf = async (pid: string): Promise<string> =>
  (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');

/** Ticks and name by process: the given pids, and the PostgreSQL backends and NATS server found in /proc. */
const snapshot = async (targets: CpuTargets): Promise<Map<number, { name: string; ticks: number }>> => {
  const processes = new Map<number, { name: string; ticks: number }>();
  const add = (name: string, pid: number, ticks: number | undefined): void => {
    if (ticks !== undefined) processes.set(pid, { name, ticks });
  };
  for (const [name, pid] of targets.pids) add(name, pid, await ticksOf(pid));
  if (targets.database !== undefined || targets.nats === true) {
    for (const pid of (await readdir('/proc')).filter((entry) => /^[0-9]+$/.test(entry))) {
      const command = await commandOf(pid);
      if (targets.database !== undefined && command.startsWith('postgres: ')) {
        if (command.split(' ').includes(targets.database))
          add('postgres', Number(pid), await ticksOf(Number(pid)));
      } else if (targets.nats === true && command.includes('nats-server')) {
        add('nats', Number(pid), await ticksOf(Number(pid)));
      }
    }
  }
  return processes;
};

/**
 * Starts accounting; `profile: false` leaves the window out of `PERF_DIR`'s recordings. The load generator (this
 * process) is measured with `process.cpuUsage`. Each process counts what it spent between the snapshots (all of
 * it when it started in between). A PostgreSQL backend that closes before the meter stops takes its CPU with it:
 * pools keep their connections under load, so this undercounts only around reconnections.
 */
export const meterCpu = async (
  targets: CpuTargets,
  { profile = true }: { readonly profile?: boolean } = {},
): Promise<CpuMeter> => {
  const ticksPerSecond = clockTicksPerSecond();
  const before = await snapshot(targets);
  const recording = profile ? await recordPerf(before) : undefined;
  const machineBefore = await machineBusyTicks();
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  const read = async (operations: number): Promise<CpuFigures> => {
    const own = process.cpuUsage(ownBefore);
    const seconds = (performance.now() - started) / 1000;
    const machineMs = ((await machineBusyTicks()) - machineBefore) * (1000 / ticksPerSecond);
    const after = await snapshot(targets);
    const spentMs = new Map<string, number>([['load generator', (own.user + own.system) / 1000]]);
    // Per process, so a backend that closed in between does not subtract its whole life from its name's sum.
    for (const [pid, { name, ticks }] of after) {
      const spent = ((ticks - (before.get(pid)?.ticks ?? 0)) * 1000) / ticksPerSecond;
      spentMs.set(name, (spentMs.get(name) ?? 0) + spent);
    }
    const round = (value: number, digits: number): number => Number(value.toFixed(digits));
    const share = (ms: number): CpuShare => ({
      cores: round(ms / 1000 / seconds, 3),
      msPerOperation: round(ms / Math.max(1, operations), 2),
    });
    const shares: Record<string, CpuShare> = {};
    let measuredMs = 0;
    for (const [name, ms] of spentMs) {
      measuredMs += ms;
      shares[name] = share(ms);
    }
    const loadGeneratorMs = spentMs.get('load generator') ?? 0;
    shares['run'] = share(measuredMs - loadGeneratorMs);
    shares['foreign'] = share(Math.max(0, machineMs - measuredMs));
    return shares as CpuFigures;
  };
  return {
    read,
    async stop(operations) {
      await recording?.stop();
      return read(operations);
    },
  };
};

let perfRecordings = 0;

/**
 * With `PERF_DIR` set, `perf record` samples the metered processes' CPU (on-CPU time, call graphs) for the
 * meter's window: `<PERF_DIR>/<n>.data`, with `<n>.pids.json` naming each process. Run the bench with
 * `NODE_OPTIONS=--perf-basic-prof` so that perf names JavaScript functions (bench/README.md, "Profiling a run").
 */
const recordPerf = async (
  processes: ReadonlyMap<number, { name: string }>,
): Promise<{ stop(): Promise<void> } | undefined> => {
  const dir = process.env['PERF_DIR'];
  if (dir === undefined || dir === '' || processes.size === 0) return undefined;
  await mkdir(dir, { recursive: true });
  const n = ++perfRecordings;
  const names = Object.fromEntries([...processes].map(([pid, { name }]) => [pid, name]));
  await writeFile(join(dir, `${n}.pids.json`), JSON.stringify(names));
  const perf = spawn(
    'perf',
    // The whole machine (a backend that closes meanwhile would stop a per-process recording); the report picks
    // the processes named in `<n>.pids.json`.
    ['record', '-F', '997', '-g', '-a', '-o', join(dir, `${n}.data`)],
    { stdio: 'ignore' },
  );
  // Until perf has set itself up: an interrupt before that would leave no readable file.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return {
    async stop() {
      if (perf.exitCode !== null) return;
      const exited = once(perf, 'exit');
      perf.kill('SIGINT');
      await exited;
    },
  };
};

/** A cluster's services, its PostgreSQL backends and the NATS server. */
export const clusterCpuTargets = (cluster: Cluster): CpuTargets => ({
  pids: new Map(
    [...cluster.processes].flatMap(([name, managed]) =>
      managed.pid === undefined ? [] : [[name, managed.pid] as const],
    ),
  ),
  database: new URL(cluster.databaseUrl).pathname.slice(1),
  nats: true,
});

/** Foreign CPU above which a measurement is taken again (best of three): a tenth of a core. */
export const FOREIGN_CPU_LIMIT_CORES = 0.1;

/**
 * Runs `measure` once, and up to three times in all while the machine's foreign CPU exceeded
 * FOREIGN_CPU_LIMIT_CORES (other work on the host inflates every process's CPU per operation: caches, context
 * switches). Keeps the attempt with the least CPU per operation, with every attempt's run and foreign figures.
 */
export const bestOfThree = async <T extends { readonly cpu: CpuFigures }>(
  measure: () => Promise<T>,
): Promise<T & { attempts: { runMsPerOperation: number; foreignCores: number }[] }> => {
  const attempts: T[] = [await measure()];
  while (attempts.length < 3 && attempts.at(-1)!.cpu.foreign.cores > FOREIGN_CPU_LIMIT_CORES) {
    attempts.push(await measure());
  }
  const best = attempts.reduce((a, b) => (b.cpu.run.msPerOperation < a.cpu.run.msPerOperation ? b : a));
  return {
    ...best,
    attempts: attempts.map(({ cpu }) => ({
      runMsPerOperation: cpu.run.msPerOperation,
      foreignCores: cpu.foreign.cores,
    })),
  };
};

/**
 * The CPU the run's processes spend with no load for `ms` (pollers, heartbeats, lease renewals), in cores: at `r`
 * operations per second it adds `cores × 1000 / r` ms to each operation's figure.
 */
export const idleCores = async (targets: CpuTargets, ms = 5_000): Promise<number> => {
  const meter = await meterCpu(targets);
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (await meter.stop(1)).run.cores;
};

/**
 * How long the load runs, unmeasured, before a measured window (`warmUp`). Profiled on 2 cores, V8's compiler
 * was still 13-21% of a process's CPU in the 10 s after 5 s of load, and 2-8% after 15 s.
 */
export const WARM_UP_MS = 15_000;

/** What the warm-up cost, apart from the measured figures: the cold start the measured window leaves out. */
export interface WarmUpFigures {
  readonly durationMs: number;
  readonly operations: number;
  readonly runMsPerOperation: number;
  readonly foreignCores: number;
}

/**
 * Runs the measured window's load for WARM_UP_MS first (`load` runs it for the given time and resolves with the
 * operations answered), so the window measures the steady state: hot code compiled and optimised by V8, heaps
 * grown, pools and consumer batches at their size, and a consumer backlog at the window's start like the one it
 * leaves at its end. Its CPU is metered (not profiled) and reported apart, never as the figure.
 */
export const warmUp = async (
  targets: CpuTargets,
  load: (durationMs: number) => Promise<number>,
): Promise<WarmUpFigures> => {
  const meter = await meterCpu(targets, { profile: false });
  const operations = await load(WARM_UP_MS);
  const { run, foreign } = await meter.stop(operations);
  return {
    durationMs: WARM_UP_MS,
    operations,
    runMsPerOperation: run.msPerOperation,
    foreignCores: foreign.cores,
  };
};
