import { loadavg } from 'node:os';
import { catalogSearch } from './catalog/catalog-search.bench.js';
import { productDetails } from './catalog/product-details.bench.js';
import { writeBarsChart } from './bars-chart.js';
import { machine, recordResult } from './results.js';
import { publishToSearchCluster, publishToSearchEmbedded } from './publish-to-search.bench.js';
import { publishToBothSearchesCluster } from './publish-to-both-searches.bench.js';
import { publishThroughput } from './publish-throughput.bench.js';
import { semanticSearchLocal } from './semantic/semantic-search.bench.js';
import {
  postgresStoreCost,
  quoteRequestsCluster,
  quoteRequestsEmbedded,
  quoteRequestsEmbeddedSlowSmtp,
} from './quote/quote-requests.bench.js';
import { listingImport } from './imports/listing-import.bench.js';
import { mcpSearch } from './mcp/mcp-search.bench.js';
import { checkout } from './order/checkout.bench.js';
import { webhookFanoutCluster, webhookFanoutEmbedded } from './subscription/webhook-fanout.bench.js';

/**
 * `pnpm bench [scenario...]`: runs the named scenarios (all by default), prints their figures and merges them
 * into bench/results/<date>.json. Needs a build (`pnpm build`) and, for cluster scenarios, PostgreSQL and NATS.
 */
const publishOptions = { listings: 300, ratePerSecond: 20, pollIntervalMs: 10 };
const publishThroughputOptions = { concurrency: 16, durationMs: 10_000 };
const catalogSearchOptions = { listings: 100_000, concurrency: 16, durationMs: 15_000 };
const productDetailsOptions = { listings: 200, concurrency: 16, durationMs: 10_000 };
const checkoutOptions = { concurrency: 16, durationMs: 10_000, listings: 32 };
/** About 10 listings/s followed, each searched for every 50 ms: the searches stay a small part of the load. */
const bothSearchesOptions = (ratePerSecond: number) => ({
  ratePerSecond,
  durationMs: 20_000,
  pollIntervalMs: 50,
  maxConcurrentPolls: 8,
  maxConcurrentPublishes: 64,
  followEvery: Math.max(1, Math.round(ratePerSecond / 10)),
});
const listingImportOptions = () => ({
  rows: Number(process.env['IMPORT_ROWS'] ?? 10_000),
  searchesPerSecond: 20,
  // 1,200 searches without the import: the p99 is then their 12th-worst. Of 600 it was the sixth-worst, which
  // spread from 11.5 to 25 ms between runs of one build (bench/results/2026-11-28-import-await.md).
  baselineMs: 60_000,
});
const mcpSearchOptions = { listings: 100, concurrency: 16, durationMs: 10_000, sampleEveryMs: 5_000 };

const scenarios: Record<string, () => Promise<Record<string, unknown>>> = {
  'publish-to-search.embedded': () => publishToSearchEmbedded(publishOptions),
  'publish-to-search.cluster-nats': () => publishToSearchCluster(publishOptions),
  // PUBLISH_RATE offers another rate than the bar's 100/s (e.g. one the machine sustains).
  'publish-to-both-searches.cluster-nats': () =>
    publishToBothSearchesCluster(bothSearchesOptions(Number(process.env['PUBLISH_RATE'] ?? 100))),
  // The same at the bar's 100/s with the listings created as events on the log: the catalog's side of that bar.
  'listing-events-to-both-searches.cluster-nats': () =>
    publishToBothSearchesCluster(bothSearchesOptions(100), 'event log'),
  // The same with only the catalog and the gateway running: what the catalog does with 100 listings/s.
  'listing-events-to-both-searches.catalog-alone': () =>
    publishToBothSearchesCluster(bothSearchesOptions(100), 'event log, catalog alone'),
  'publish-throughput.cluster-nats': () => publishThroughput('cluster-nats', publishThroughputOptions),
  'publish-throughput.embedded': () => publishThroughput('embedded', publishThroughputOptions),
  'catalog-search.cluster-nats': () => catalogSearch('cluster-nats', catalogSearchOptions),
  'catalog-search.embedded': () => catalogSearch('embedded', catalogSearchOptions),
  'product-details.cluster-nats': () => productDetails('cluster-nats', productDetailsOptions),
  'product-details.embedded': () => productDetails('embedded', productDetailsOptions),
  'semantic-search.local': async () => ({ ...(await semanticSearchLocal()) }),
  'quote-requests.cluster-nats': () => quoteRequestsCluster({ concurrency: 64, durationMs: 15_000 }),
  // 16 clients, as publish-throughput.embedded: enough to keep the one process busy (issue 15's measurement).
  'quote-requests.embedded': () => quoteRequestsEmbedded({ concurrency: 16, durationMs: 15_000 }),
  // A mail server taking 150 ms per message (about the exchange issue 15 measured; SMTP_DELAY_MS another), 16 clients.
  'quote-requests.embedded-slow-smtp': () =>
    quoteRequestsEmbeddedSlowSmtp({
      concurrency: 16,
      durationMs: 10_000,
      smtpDelayMs: Number(process.env['SMTP_DELAY_MS'] ?? 150),
    }),
  'rate-limit-store.postgres': async () => ({ concurrency: 16, ...(await postgresStoreCost(16, 10_000)) }),
  // IMPORT_ROWS another size than the bar's 10,000 rows.
  'listing-import.cluster-nats': () => listingImport('cluster-nats', listingImportOptions()),
  'listing-import.embedded': () => listingImport('embedded', listingImportOptions()),
  'checkout.cluster-nats': () => checkout('cluster-nats', checkoutOptions),
  'checkout.embedded': () => checkout('embedded', checkoutOptions),
  'webhook-fanout.cluster-nats': () =>
    webhookFanoutCluster({
      subscriptions: 10_000,
      listingsPerSecond: 100,
      durationMs: 20_000,
      vocabulary: 150,
    }),
  // One process on 2 cores carries a fraction of the cluster's load: a fifth of the saved searches with a fifth of
  // the words (as many matches per listing), at a tenth of the rate.
  'webhook-fanout.embedded': () =>
    webhookFanoutEmbedded({
      subscriptions: 2_000,
      listingsPerSecond: 10,
      durationMs: 20_000,
      vocabulary: 30,
    }),
  // MCP_SOAK_MS shortens the 5-minute soak on a busy machine (the run records the length it used).
  'mcp-search.embedded': () =>
    mcpSearch('embedded', { ...mcpSearchOptions, soakMs: Number(process.env['MCP_SOAK_MS'] ?? 300_000) }),
  // The soak is the embedded bar's; the same /mcp code in the cluster's gateway is not soaked again.
  'mcp-search.cluster-nats': () => mcpSearch('cluster-nats', { ...mcpSearchOptions, soakMs: 0 }),
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in scenarios));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown scenario(s): ${unknown.join(', ')}\nknown: ${Object.keys(scenarios).join(', ')}\n`,
  );
  process.exit(2);
}

process.stdout.write(`machine: ${JSON.stringify(machine())}\n`);
for (const name of requested.length > 0 ? requested : Object.keys(scenarios)) {
  const run = scenarios[name];
  if (!run) continue;
  process.stdout.write(`\n== ${name}\n`);
  // Every process of a run shares the machine's cores: the load average says how much else was running.
  const loadAverageBefore = loadavg()[0];
  const figures: Record<string, unknown> = {
    ...(await run()),
    loadAverage1m: { before: loadAverageBefore, after: loadavg()[0] },
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`written to ${await recordResult(name, figures)}\n`);
  // A scenario whose figure leaves work out (e.g. a drain that timed out) records why under `failed`.
  const { failed } = figures;
  if (typeof failed === 'string') {
    process.stderr.write(`${name} failed: ${failed}\n`);
    process.exitCode = 1;
  }
}
process.stdout.write(`chart of every bar: ${await writeBarsChart()}\n`);
