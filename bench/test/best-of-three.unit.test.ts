import { describe, expect, it } from '@jest/globals';
import { bestOfThree, FOREIGN_CPU_LIMIT_CORES, type CpuFigures } from '../src/process-cpu.js';

describe('bestOfThree', () => {
  const figures = (runMs: number, foreignCores: number) => ({
    cpu: {
      run: { cores: 0.5, msPerOperation: runMs },
      'load generator': { cores: 0.1, msPerOperation: 1 },
      foreign: { cores: foreignCores, msPerOperation: 1 },
    } as CpuFigures,
  });

  it('measures once on a quiet machine', async () => {
    let runs = 0;
    const best = await bestOfThree(async () => figures(10 + runs++, FOREIGN_CPU_LIMIT_CORES / 2));
    expect(runs).toBe(1);
    expect(best.attempts).toEqual([{ runMsPerOperation: 10, foreignCores: FOREIGN_CPU_LIMIT_CORES / 2 }]);
  });

  it('measures again while foreign CPU exceeds the limit, three times at most, and keeps the cheapest', async () => {
    const runMs = [12, 9, 11, 5];
    let runs = 0;
    const best = await bestOfThree(async () => figures(runMs[runs++]!, 1.2));
    expect(runs).toBe(3);
    expect(best.cpu.run.msPerOperation).toBe(9);
    expect(best.attempts.map((attempt) => attempt.runMsPerOperation)).toEqual([12, 9, 11]);
  });

  it('stops once an attempt ran on a quiet machine', async () => {
    const foreign = [1.2, 0.05, 1.2];
    let runs = 0;
    await bestOfThree(async () => figures(10, foreign[runs++]!));
    expect(runs).toBe(2);
  });
});
