import { describe, expect, it } from '@jest/globals';
import { meterCpu } from '../src/process-cpu.js';

describe('meterCpu', () => {
  it('accounts the CPU a process spends, per operation, from /proc', async () => {
    const meter = await meterCpu({ pids: new Map([['busy', process.pid]]) });
    const started = performance.now();
    while (performance.now() - started < 300) Math.sqrt(Math.random());
    const shares = await meter.stop(10);
    // This process was busy the whole window: close to one core, seen both from /proc and by cpuUsage.
    expect(shares['busy']!.cores).toBeGreaterThan(0.5);
    expect(shares['busy']!.msPerOperation).toBeGreaterThan(15);
    expect(shares['load generator']!.cores).toBeGreaterThan(0.5);
    expect(shares['total']!.msPerOperation).toBeCloseTo(
      shares['busy']!.msPerOperation + shares['load generator']!.msPerOperation,
      1,
    );
  });
});
