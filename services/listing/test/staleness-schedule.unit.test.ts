import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@marketplace/platform';
import { scheduleStalenessCheck } from '../src/application/staleness.js';

const logger = createLogger({ service: 'staleness-schedule-test', level: 'silent' });

describe('staleness schedule', () => {
  it('runs at start and then on every interval, one pass at a time, surviving a failed pass', async () => {
    let started = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const schedule = scheduleStalenessCheck(
      async () => {
        started++;
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await sleep(30);
        concurrent--;
        if (started === 1) throw new Error('database away');
        return 0;
      },
      { intervalMs: 10, logger },
    );
    expect(started).toBe(1);
    await sleep(200);
    await schedule.stop();
    expect(started).toBeGreaterThan(2);
    expect(maxConcurrent).toBe(1);
  });

  it('stops: no pass after stop(), and stop() waits for the pass in hand', async () => {
    let finished = false;
    let passes = 0;
    const schedule = scheduleStalenessCheck(
      async () => {
        passes++;
        await sleep(50);
        finished = true;
        return 1;
      },
      { intervalMs: 1_000, logger },
    );
    await schedule.stop();
    expect(finished).toBe(true);
    await sleep(20);
    expect(passes).toBe(1);
  });
});
