import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../src/harness/processes.js';
import { runCampaign } from './campaign.js';
import { allFaults } from './faults.js';
import { natsServer } from './nats-server.js';

/**
 * `pnpm faults`: every fault of the topology, NATS server included, 10 cycles each by default, against one
 * cluster; writes e2e/faults/results/<date>.json and exits 1 when any cycle broke an invariant.
 * Options: --cycles <n>, --no-nats (leave the machine's shared NATS server alone).
 */
const { values } = parseArgs({
  options: { cycles: { type: 'string', default: '10' }, 'no-nats': { type: 'boolean', default: false } },
});
const cycles = Number(values.cycles);
if (!Number.isSafeInteger(cycles) || cycles < 1) throw new Error(`--cycles must be a positive integer`);

// The NATS server is shared with everything else on the machine: it is started again however this run ends.
process.on('exit', () => natsServer.ensureRunning());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    natsServer.ensureRunning();
    process.exit(130);
  });
}

const report = await runCampaign({
  faults: allFaults({ includeNats: !values['no-nats'] }),
  cycles,
  load: { workers: 2, pauseMs: 20, accountEvery: 10 },
  ackWaitMs: 1_000,
  loadBeforeMs: 500,
  loadAfterMs: 1_000,
  convergeTimeoutMs: 60_000,
  progress: (message) => console.log(message),
});
const directory = join(repoRoot, 'e2e/faults/results');
await mkdir(directory, { recursive: true });
const file = join(directory, `${report.startedAt.slice(0, 10)}.json`);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
console.log(JSON.stringify(report.summary, null, 2));
console.log(
  `${report.passed ? 'PASSED' : 'FAILED'}: ${report.totals.cycles} cycles, ${report.totals.failedCycles} failed, ` +
    `${report.totals.listingsAcknowledged} listings and ${report.totals.accountsAcknowledged} accounts acknowledged; ${file}`,
);
process.exitCode = report.passed ? 0 : 1;
