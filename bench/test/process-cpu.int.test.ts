import { describe, expect, it } from '@jest/globals';
import { idleCores, meterCpu, WARM_UP_MS, warmUp } from '../src/process-cpu.js';

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

describe('idleCores', () => {
  it('is the CPU the run spends while nothing is sent: near nothing for a process that waits', async () => {
    const cores = await idleCores({ pids: new Map([['waiting', process.pid]]) }, 500);
    expect(cores).toBeGreaterThanOrEqual(0);
    expect(cores).toBeLessThan(0.2);
  });
});

describe('warmUp', () => {
  it("runs the load for the warm-up's length and reports its CPU per operation apart", async () => {
    const asked: number[] = [];
    const figures = await warmUp({ pids: new Map([['busy', process.pid]]) }, async (durationMs) => {
      asked.push(durationMs);
      // Busy for 200 ms of CPU time: four operations of 50 ms, however loaded the machine is.
      const started = process.cpuUsage();
      const cpuMs = () => {
        const { user, system } = process.cpuUsage(started);
        return (user + system) / 1000;
      };
      while (cpuMs() < 200) Math.sqrt(Math.random());
      return 4;
    });
    expect(asked).toEqual([WARM_UP_MS]);
    expect(figures.durationMs).toBe(WARM_UP_MS);
    expect(figures.operations).toBe(4);
    // /proc counts in clock ticks (10 ms): 50 ms per operation, seen with that resolution.
    expect(figures.runMsPerOperation).toBeGreaterThanOrEqual(45);
    expect(figures.runMsPerOperation).toBeLessThan(100);
    expect(figures.foreignCores).toBeGreaterThanOrEqual(0);
  });
});
