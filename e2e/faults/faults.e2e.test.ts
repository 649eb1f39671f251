import { describe, expect, it } from '@jest/globals';
import { runCampaign } from './campaign.js';
import { allFaults } from './faults.js';

/**
 * The fault run's deterministic sample, one cycle each of the faults that cost no full restart but the relay's
 * (a kill between publish and checkpoint), a paused consumer and dropped connections mid-transaction. The other
 * kills are in cluster.e2e.test.ts (the catalog) and in `pnpm faults`, which also crashes the NATS server
 * (shared by the whole machine, so never from `pnpm test`).
 */
const SAMPLE = [
  'relay-crash:listing',
  'pause:catalog',
  'db-drop:listing',
  'db-drop:catalog',
  'db-drop:order',
];

describe('fault injection sample (cluster mode, PostgreSQL and NATS)', () => {
  it('loses and duplicates nothing across one cycle of each sampled fault', async () => {
    const faults = allFaults({ includeNats: false }).filter((fault) => SAMPLE.includes(fault.name));
    expect(faults.map((fault) => fault.name)).toEqual(SAMPLE);
    const report = await runCampaign({
      faults,
      cycles: 1,
      load: { workers: 1, pauseMs: 50, accountEvery: 10, quoteEvery: 5, orderEvery: 5 },
      ackWaitMs: 1_000,
      loadBeforeMs: 200,
      loadAfterMs: 300,
      convergeTimeoutMs: 30_000,
    });
    expect(report.cycles.filter((cycle) => !cycle.passed)).toEqual([]);
    expect(report.totals.cycles).toBe(SAMPLE.length);
    expect(report.totals.writesAcknowledged['listing']).toBeGreaterThan(0);
  }, 240_000);
});
