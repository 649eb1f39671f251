import { describe, expect, it } from '@jest/globals';
import { meterCpu } from '../src/process-cpu.js';

describe('meterCpu', () => {
  it('accounts the CPU a process spends, per operation, from /proc; the load generator apart', async () => {
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
    expect(shares['load generator'].msPerOperation).toBeGreaterThanOrEqual(30);
    // The run is every measured process but the load generator (here the same process under two names).
    expect(shares.run.msPerOperation).toBeCloseTo(shares['busy']!.msPerOperation, 1);
    // Foreign: the machine's busy time that none of them spent; never negative.
    expect(shares.foreign.cores).toBeGreaterThanOrEqual(0);
  });
});
