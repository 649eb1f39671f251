import { describe, expect, it } from '@jest/globals';
import { XMLValidator } from 'fast-xml-parser';
import { barsChartSvg, BARS, measureBars } from '../src/bars-chart.js';

const results = new Map<string, Record<string, unknown>>([
  ['publish-to-search.embedded', { measuredAt: '2026-11-24T10:00:00Z', publishToSearchMs: { p99: 50 } }],
  [
    'quote-requests.cluster-nats',
    { measuredAt: '2026-11-24T11:00:00Z', withPostgresRateLimits: { quoteRequestsPerSecond: 100 } },
  ],
]);

describe('the chart of every bar', () => {
  it('orients headroom so that 1 or more meets the bar, for latencies and throughputs alike', () => {
    const measured = measureBars(results);
    expect(measured.map(({ bar, headroom }) => [bar.scenario, headroom])).toEqual([
      ['publish-to-search.embedded', 10],
      ['quote-requests.cluster-nats', 0.1],
    ]);
  });

  it('leaves out bars whose scenario has no result yet', () => {
    expect(measureBars(new Map())).toEqual([]);
    expect(BARS.length).toBeGreaterThan(measureBars(results).length);
  });

  it('draws a well-formed SVG with a green bar for a met target and a red one for a missed target', () => {
    const svg = barsChartSvg(measureBars(results));
    expect(XMLValidator.validate(svg)).toBe(true);
    expect(svg).toContain('publish → searchable p99, embedded');
    expect(svg).toContain('50 ms (bar ≤ 500 ms) 2026-11-24');
    expect(svg).toContain('100/s (bar ≥ 1000/s) 2026-11-24');
    expect(svg.match(/fill="#2e7d32"/g)).toHaveLength(1);
    expect(svg.match(/fill="#c62828"/g)).toHaveLength(1);
  });
});
