import { readdir, readFile, writeFile } from 'node:fs/promises';
import { resultsDir } from './results.js';

/** One bar an issue set, and where its figure is in a scenario's recorded result. */
export interface Bar {
  readonly label: string;
  readonly scenario: string;
  /** The figure from the scenario's recorded result; undefined when the result does not hold it. */
  readonly figure: (result: Record<string, unknown>) => number | undefined;
  readonly target: number;
  /** Throughputs and ratios must reach the target; latencies must stay under it. */
  readonly better: 'higher' | 'lower';
  readonly unit: string;
}

const at = (result: Record<string, unknown>, path: string): number | undefined => {
  let value: unknown = result;
  for (const key of path.split('.')) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  return typeof value === 'number' ? value : undefined;
};

const figureAt =
  (path: string) =>
  (result: Record<string, unknown>): number | undefined =>
    at(result, path);

/** The bars of the catalog, sellers, quotes, saved-searches, agent-surfaces and foundation issues. */
export const BARS: readonly Bar[] = [
  {
    label: 'publish → searchable p99, embedded',
    scenario: 'publish-to-search.embedded',
    figure: figureAt('publishToSearchMs.p99'),
    target: 500,
    better: 'lower',
    unit: 'ms',
  },
  {
    label: 'publish → searchable p99, cluster',
    scenario: 'publish-to-search.cluster-nats',
    figure: figureAt('publishToSearchMs.p99'),
    target: 500,
    better: 'lower',
    unit: 'ms',
  },
  {
    label: 'publications/s without images',
    scenario: 'publish-throughput.cluster-nats',
    figure: figureAt('fromImageLibrary.listingsPerSecond'),
    target: 500,
    better: 'higher',
    unit: '/s',
  },
  {
    label: 'publications/s with images',
    scenario: 'publish-throughput.cluster-nats',
    figure: figureAt('withImages.listingsPerSecond'),
    target: 50,
    better: 'higher',
    unit: '/s',
  },
  {
    label: 'lexical search p99 at half saturation',
    scenario: 'catalog-search.cluster-nats',
    figure: figureAt('gateway.atHalfRate.latencyMs.p99'),
    target: 25,
    better: 'lower',
    unit: 'ms',
  },
  {
    label: 'semantic search p99 at half saturation',
    scenario: 'catalog-search.cluster-nats',
    figure: figureAt('semantic.gateway.atHalfRate.latencyMs.p99'),
    target: 40,
    better: 'lower',
    unit: 'ms',
  },
  {
    label: 'semantic recall@10',
    scenario: 'semantic-search.local',
    figure: figureAt('recallAt10'),
    target: 0.8,
    better: 'higher',
    unit: '',
  },
  {
    label: 'created → in both searches: rate',
    scenario: 'publish-to-both-searches.cluster-nats (100/s offered)',
    figure: figureAt('achievedRatePerSecond'),
    target: 100,
    better: 'higher',
    unit: '/s',
  },
  {
    label: 'anonymous quote requests/s',
    scenario: 'quote-requests.cluster-nats',
    figure: figureAt('withPostgresRateLimits.quoteRequestsPerSecond'),
    target: 1_000,
    better: 'higher',
    unit: '/s',
  },
  {
    label: 'saved-search webhook p99 (100/s, 10k)',
    scenario: 'webhook-fanout.cluster-nats',
    figure: figureAt('committedToFirstAttemptMs.p99'),
    target: 1_000,
    better: 'lower',
    unit: 'ms',
  },
  {
    label: 'MCP / REST search throughput',
    scenario: 'mcp-search.embedded',
    figure: figureAt('mcpToRestRatio'),
    target: 0.25,
    better: 'higher',
    unit: '',
  },
];

export interface MeasuredBar {
  readonly bar: Bar;
  readonly measured: number;
  readonly measuredAt: string;
  /** Measured against target, oriented so that 1 or more meets the bar. */
  readonly headroom: number;
}

/** When a result was recorded (ISO 8601, so it sorts as text); '' for a result without the field. */
const measuredAtOf = (result: Record<string, unknown>): string =>
  typeof result['measuredAt'] === 'string' ? result['measuredAt'] : '';

/** Each scenario's newest recorded result across every results file. */
export const newestResults = async (
  directory = resultsDir,
): Promise<Map<string, Record<string, unknown>>> => {
  const newest = new Map<string, Record<string, unknown>>();
  const files = (await readdir(directory)).filter((name) => /^\d{4}-\d{2}-\d{2}\.json$/.test(name)).sort();
  for (const file of files) {
    const { scenarios } = JSON.parse(await readFile(`${directory}${file}`, 'utf8')) as {
      scenarios?: Record<string, Record<string, unknown>>;
    };
    for (const [scenario, result] of Object.entries(scenarios ?? {})) {
      const known = newest.get(scenario);
      if (known === undefined || measuredAtOf(result) >= measuredAtOf(known)) newest.set(scenario, result);
    }
  }
  return newest;
};

export const measureBars = (
  results: ReadonlyMap<string, Record<string, unknown>>,
  bars: readonly Bar[] = BARS,
): MeasuredBar[] =>
  bars.flatMap((bar) => {
    const result = results.get(bar.scenario);
    const measured = result === undefined ? undefined : bar.figure(result);
    if (result === undefined || measured === undefined || measured <= 0) return [];
    const headroom = bar.better === 'higher' ? measured / bar.target : bar.target / measured;
    return [{ bar, measured, measuredAt: measuredAtOf(result), headroom }];
  });

const escapeXml = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

const shown = (value: number, unit: string): string =>
  `${value >= 100 ? Math.round(value) : Number(value.toPrecision(3))}${unit === '/s' ? '/s' : unit === '' ? '' : ` ${unit}`}`;

/**
 * A horizontal bar per issue bar, on a log scale of headroom from 1/100 to 100 times the target, the target at
 * the middle: green bars reach it, red ones do not, each labelled with the figure, the target and the date.
 */
export const barsChartSvg = (measured: readonly MeasuredBar[]): string => {
  const row = 26;
  const labelWidth = 290;
  const plotWidth = 420;
  const top = 40;
  const height = top + measured.length * row + 30;
  const width = labelWidth + plotWidth + 250;
  const decades = 2;
  const xOf = (headroom: number): number => {
    const clamped = Math.min(Math.max(Math.log10(headroom), -decades), decades);
    return labelWidth + ((clamped + decades) / (2 * decades)) * plotWidth;
  };
  const middle = xOf(1);
  const rows = measured.map(({ bar, measured: value, measuredAt, headroom }, index) => {
    const y = top + index * row;
    const end = xOf(headroom);
    const met = headroom >= 1;
    const comparison = bar.better === 'higher' ? '≥' : '≤';
    return [
      `<text x="${labelWidth - 8}" y="${y + 16}" text-anchor="end">${escapeXml(bar.label)}</text>`,
      `<rect x="${Math.min(middle, end)}" y="${y + 4}" width="${Math.max(1, Math.abs(end - middle))}" height="16" fill="${met ? '#2e7d32' : '#c62828'}"/>`,
      `<text x="${labelWidth + plotWidth + 8}" y="${y + 16}">${escapeXml(`${shown(value, bar.unit)} (bar ${comparison} ${shown(bar.target, bar.unit)}) ${measuredAt.slice(0, 10)}`)}</text>`,
    ].join('');
  });
  const ticks = [-2, -1, 0, 1, 2].map((power) => {
    const x = xOf(10 ** power);
    const stroke = power === 0 ? 'stroke="#333" stroke-width="2"' : 'stroke="#bbb"';
    return `<line x1="${x}" y1="${top - 6}" x2="${x}" y2="${height - 24}" ${stroke}/><text x="${x}" y="${height - 8}" text-anchor="middle">${power === 0 ? 'target' : `${10 ** power}×`}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${labelWidth}" y="20" font-weight="bold">Each bar against its target (log scale; right of the target line meets it)</text>`,
    ...ticks,
    ...rows,
    '</svg>',
    '',
  ].join('\n');
};

/** Writes bench/results/bars.svg from the newest result of every scenario. */
export const writeBarsChart = async (directory = resultsDir): Promise<string> => {
  const file = `${directory}bars.svg`;
  await writeFile(file, barsChartSvg(measureBars(await newestResults(directory))));
  return file;
};
