import { describe, expect, it } from '@jest/globals';
import { pgbenchScript } from '../src/publish-throughput.bench.js';

/** The lines of a pgbench script that use the variable `:n`, and the line that sets it. */
const productNumberUse = (script: string) => {
  const lines = script.trim().split('\n');
  return {
    setters: lines.filter((line) => /^\\set n |AS n \\gset$/.test(line)),
    firstSetter: lines.findIndex((line) => /AS n \\gset$/.test(line)),
    firstUse: lines.findIndex((line) => line.includes(':n')),
  };
};

describe('the pgbench script of a publication', () => {
  it.each([true, false])(
    'takes each stream id from the product-number sequence, as the service does (with image: %s)',
    (withImage) => {
      // A random stream id collided within a 10 s run (`events_stream_id_version_key`) and aborted the bench.
      const { setters, firstSetter, firstUse } = productNumberUse(pgbenchScript('mk_abc', withImage));
      expect(setters).toEqual(["SELECT nextval('pgbench_publish.product_number_seq') AS n \\gset"]);
      expect(firstSetter).toBeGreaterThanOrEqual(0);
      expect(firstSetter).toBeLessThan(firstUse);
    },
  );
});
