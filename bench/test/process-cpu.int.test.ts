import { describe, expect, it } from '@jest/globals';
import { meterCpu } from '../src/process-cpu.js';

describe('meterCpu', () => {
  it('accounts the CPU a process spends, per operation, from /proc', async () => {
    const meter = await meterCpu({ pids: new Map([['busy', process.pid]]) });
    // Busy for 300 ms of CPU time (not wall time), however loaded the machine is.
    const started = process.cpuUsage();
    const cpuMs = () => {
      const { user, system } = process.cpuUsage(started);
      return (user + system) / 1000;
    };
    while (cpuMs() < 300) Math.sqrt(Math.random());
    const shares = await meter.stop(10);
    // /proc counts in clock ticks (10 ms), process.cpuUsage in microseconds: the same 300 ms, seen twice.
    expect(shares['busy']!.msPerOperation).toBeGreaterThanOrEqual(27);
    expect(shares['busy']!.msPerOperation).toBeLessThan(60);
    expect(shares['load generator']!.msPerOperation).toBeGreaterThanOrEqual(30);
    expect(shares['total']!.msPerOperation).toBeCloseTo(
      shares['busy']!.msPerOperation + shares['load generator']!.msPerOperation,
      1,
    );
  });
});
