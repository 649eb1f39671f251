import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../src/harness/processes.js';
import { runCampaign, type CampaignReport } from './campaign.js';
import { allFaults, selectFaults } from './faults.js';
import { natsServer } from './nats-server.js';

/**
 * `pnpm faults`: every fault of the topology, NATS server included, 10 cycles each by default, against one
 * cluster; writes e2e/faults/results/<date>.json and exits 1 when any cycle broke an invariant.
 * Options: --cycles <n>, --no-nats (leave the machine's shared NATS server alone), --only <list> (the faults
 * whose name, kind or target is in the comma-separated list: `kill:quote`, `db-drop:`, `order`), --label <word>
 * (writes results/<date>-<word>.json, so a second run the same day keeps the first one's file), --replicas <n>
 * (every service and the gateway n processes; the kills take one of them, the load searches too).
 */
const { values } = parseArgs({
  options: {
    cycles: { type: 'string', default: '10' },
    'no-nats': { type: 'boolean', default: false },
    only: { type: 'string' },
    label: { type: 'string' },
    replicas: { type: 'string', default: '1' },
  },
});
const cycles = Number(values.cycles);
if (!Number.isSafeInteger(cycles) || cycles < 1) throw new Error(`--cycles must be a positive integer`);
const replicas = Number(values.replicas);
if (!Number.isSafeInteger(replicas) || replicas < 1) throw new Error(`--replicas must be a positive integer`);
const faults = selectFaults(allFaults({ includeNats: !values['no-nats'], replicas }), values.only);

// The NATS server is shared with everything else on the machine: it is started again however this run ends.
process.on('exit', () => natsServer.ensureRunning());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    natsServer.ensureRunning();
    process.exit(130);
  });
}

const directory = join(repoRoot, 'e2e/faults/results');
await mkdir(directory, { recursive: true });
const suffix = values.label === undefined ? '' : `-${values.label.replace(/[^\w-]/g, '')}`;
const fileOf = (report: CampaignReport): string =>
  join(directory, `${report.startedAt.slice(0, 10)}${suffix}.json`);
const save = (report: CampaignReport): Promise<void> =>
  writeFile(fileOf(report), `${JSON.stringify(report, null, 2)}\n`);

const report = await runCampaign({
  faults,
  cycles,
  load: {
    workers: 2,
    pauseMs: 20,
    accountEvery: 10,
    quoteEvery: 5,
    orderEvery: 5,
    ...(replicas > 1 ? { searchPauseMs: 50 } : {}),
  },
  replicas,
  ackWaitMs: 1_000,
  loadBeforeMs: 500,
  loadAfterMs: 1_000,
  convergeTimeoutMs: 60_000,
  progress: (message) => console.log(message),
  onRound: save,
});
await save(report);
console.log(JSON.stringify(report.summary, null, 2));
console.log(
  `${report.passed ? 'PASSED' : 'FAILED'}: ${report.totals.cycles} cycles, ${report.totals.failedCycles} failed, ` +
    `writes acknowledged ${JSON.stringify(report.totals.writesAcknowledged)}; ${fileOf(report)}`,
);
process.exitCode = report.passed ? 0 : 1;
