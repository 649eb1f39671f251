/** One reading of a process's resident set size during a soak. */
export interface RssSample {
  /** Since the soak started. */
  readonly atMs: number;
  readonly rss: number;
}

/** Least-squares slope of (minutes, MiB) samples: how fast memory grows under steady load; 0 below two samples. */
export const slopePerMinute = (samples: readonly RssSample[]): number => {
  const xs = samples.map((sample) => sample.atMs / 60_000);
  const ys = samples.map((sample) => sample.rss);
  const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const mx = mean(xs);
  const my = mean(ys);
  const numerator = xs.reduce((sum, x, i) => sum + (x - mx) * (ys[i]! - my), 0);
  const denominator = xs.reduce((sum, x) => sum + (x - mx) ** 2, 0);
  return denominator === 0 ? 0 : Math.round((numerator / denominator) * 100) / 100;
};

/**
 * What a soak's samples say: the first, the first after `warmUpMs` (heap growing to its working size), the last,
 * the highest, and the slope after warm-up (flat memory: no growth trend). Fields are undefined without samples.
 */
export const memoryTrend = (samples: readonly RssSample[], warmUpMs: number) => {
  const steady = samples.filter((sample) => sample.atMs >= warmUpMs);
  return {
    first: samples[0]?.rss,
    afterWarmUp: steady[0]?.rss,
    last: samples[samples.length - 1]?.rss,
    max: samples.length === 0 ? undefined : Math.max(...samples.map((sample) => sample.rss)),
    steadySlopePerMinute: slopePerMinute(steady),
    samples: samples.length,
  };
};
