import { metrics, trace, type Histogram, type Tracer } from '@opentelemetry/api';

const SCOPE = '@marketplace/telemetry';

/** The tracer of the marketplace's own spans (the API's proxy: it follows an SDK started later). */
export const tracer = (): Tracer => trace.getTracer(SCOPE);

/** Request durations in seconds, the stable semantic-convention buckets. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

const histograms = new Map<string, Histogram>();

/**
 * A duration histogram (seconds): rate, errors (by status attribute) and duration in one instrument, the RED
 * metrics. Created on first use, after the SDK registered its meter provider (the metrics API has no proxy).
 */
export const durationHistogram = (name: string, description: string): Histogram => {
  let histogram = histograms.get(name);
  if (!histogram) {
    histogram = metrics.getMeter(SCOPE).createHistogram(name, {
      description,
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    histograms.set(name, histogram);
  }
  return histogram;
};

export const secondsSince = (startedAt: number): number => (performance.now() - startedAt) / 1000;
