import { describe, expect, it } from '@jest/globals';
import type { ChunkPlan, ChunkPlanLimits } from '../src/contexts/listings/imports/chunk-plan.js';
import {
  DEFAULT_CHUNK_PLAN_LIMITS,
  firstChunkPlan,
  medianOf,
  nextChunkPlan,
} from '../src/contexts/listings/imports/chunk-plan.js';

const LIMITS: ChunkPlanLimits = {
  minRows: 20,
  maxRows: 300,
  startRows: 20,
  stepRows: 10,
  excessFactor: 1.5,
  restShare: 0.5,
  maxRestMs: 1_000,
};
const BASE = [5, 6, 7, 6, 60];
const calm = { chunkMs: 400, during: [6, 7, 8], base: BASE };
const slowed = { chunkMs: 400, during: [6, 7, 40], base: BASE };

/** The plans after each observation in turn, from the first. */
const plansAfter = (seen: readonly Parameters<typeof nextChunkPlan>[1][]): ChunkPlan[] => {
  const plans = [firstChunkPlan(LIMITS)];
  for (const observation of seen) plans.push(nextChunkPlan(plans.at(-1)!, observation, LIMITS));
  return plans;
};

describe('planning the next import chunk (nextChunkPlan)', () => {
  it('starts small and doubles while the foreground stays near its base (slow start), up to the largest chunk', () => {
    expect(plansAfter([calm, calm, calm, calm, calm]).map((plan) => plan.rows)).toEqual([
      20, 40, 80, 160, 300, 300,
    ]);
  });

  it('halves on a chunk that slowed the foreground, then grows by a step per calm chunk', () => {
    const plans = plansAfter([calm, calm, slowed, calm, calm, slowed, slowed, slowed, slowed]);
    expect(plans.map((plan) => plan.rows)).toEqual([20, 40, 80, 40, 50, 60, 30, 20, 20, 20]);
    expect(plans.map((plan) => plan.slowStart)).toEqual([
      true,
      true,
      true,
      ...Array.from({ length: 7 }, () => false),
    ]);
  });

  it('judges a chunk by the mean latency it caused against the median at rest: one slow request at rest does not raise the base', () => {
    expect(medianOf(BASE)).toBe(6);
    expect(medianOf([4, 8])).toBe(6);
    expect(medianOf([])).toBeUndefined();
    // Mean 9.0 is within 1.5 x 6; mean 9.3 is not.
    const [, within] = plansAfter([{ chunkMs: 100, during: [8, 9, 10], base: BASE }]);
    const [, beyond] = plansAfter([{ chunkMs: 100, during: [8, 10, 10], base: BASE }]);
    expect(within?.rows).toBe(40);
    expect(beyond?.rows).toBe(20);
  });

  it('rests its share of the chunk while foreground requests come, at most maxRestMs', () => {
    expect(nextChunkPlan(firstChunkPlan(LIMITS), calm, LIMITS).restMs).toBe(200);
    expect(nextChunkPlan(firstChunkPlan(LIMITS), { ...slowed, chunkMs: 10_000 }, LIMITS).restMs).toBe(1_000);
  });

  it('goes at full size without rest when no foreground request came, during the chunk or at rest', () => {
    expect(nextChunkPlan(firstChunkPlan(LIMITS), { chunkMs: 400, during: [], base: [] }, LIMITS)).toEqual({
      rows: 300,
      restMs: 0,
      slowStart: true,
    });
  });

  it('keeps growing when requests came at rest but none during the chunk', () => {
    expect(nextChunkPlan(firstChunkPlan(LIMITS), { chunkMs: 400, during: [], base: BASE }, LIMITS)).toEqual({
      rows: 40,
      restMs: 200,
      slowStart: true,
    });
  });

  it('keeps its size and rests when requests came during the chunk but no base was seen yet', () => {
    expect(
      nextChunkPlan(
        { rows: 80, restMs: 0, slowStart: true },
        { chunkMs: 400, during: [50], base: [] },
        LIMITS,
      ),
    ).toEqual({ rows: 80, restMs: 200, slowStart: true });
  });

  it("keeps every chunk within the bulk engine's bounds by default", () => {
    expect(firstChunkPlan().rows).toBeGreaterThanOrEqual(DEFAULT_CHUNK_PLAN_LIMITS.minRows);
    expect(DEFAULT_CHUNK_PLAN_LIMITS.maxRows).toBeLessThanOrEqual(1_000);
  });

  it('works at most a tenth of the time by default while foreground requests come (docs/imports.md, "Pacing")', () => {
    const rested = nextChunkPlan(firstChunkPlan(), { ...calm, chunkMs: 150 });

    expect(rested.restMs).toBe(1_350);
    expect(150 / (150 + rested.restMs)).toBeCloseTo(0.1);
  });
});
