import TestSequencer from '@jest/test-sequencer';

/** End-to-end files take longest, unit files least: the layer's rank (docs/testing.md, "Order of files"). */
const LAYER_RANK = [/\.e2e\.test\.ts$/, /\.int\.test\.ts$/];
const rankOf = (path) => {
  const rank = LAYER_RANK.findIndex((pattern) => pattern.test(path));
  return rank === -1 ? LAYER_RANK.length : rank;
};

/**
 * Jest's order, except for files it has no duration of, which it would sort by size alone: on a fresh clone
 * (no cache) a long integration file could start last and run alone at the end. Those go by layer, then size,
 * so the many short unit files fill the workers at the end.
 */
export default class LayerFirstSequencer extends (TestSequencer.default ?? TestSequencer) {
  sort(tests) {
    const sorted = super.sort(tests);
    const timed = sorted.filter((test) => test.duration != null || this.hasFailed(test));
    const untimed = sorted.filter((test) => !timed.includes(test));
    const stable = untimed.map((test, index) => ({ test, index }));
    stable.sort((a, b) => rankOf(a.test.path) - rankOf(b.test.path) || a.index - b.index);
    return [...timed, ...stable.map(({ test }) => test)];
  }
}
