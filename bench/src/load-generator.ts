import { httpSender } from './catalog/load.js';
import { measureLayer } from './same-run-limit.js';
import type { HttpLoad, LayerOptions } from './same-run-limit.js';

/**
 * A load generator in its own process (forked by `measureHttpLayer`): receives one HTTP load and its options,
 * measures the layer, sends the figures back and exits.
 */
process.once('message', (job: { load: HttpLoad; options: LayerOptions }) => {
  const { load, options } = job;
  void measureLayer(httpSender(load.baseUrl, load.requests, options.concurrency), options).then(
    (figures) => process.send?.(figures, () => process.exit(0)),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    },
  );
});
