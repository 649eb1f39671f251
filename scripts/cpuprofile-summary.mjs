// Summarizes a .cpuprofile: self time by package and function, inclusive time of the repo's functions and by package.
// node scripts/cpuprofile-summary.mjs <file.cpuprofile> [operations] [top]; LAST_S=<n> keeps the last n seconds only.
import { readFileSync } from 'node:fs';
const [file, nArg, topArg] = process.argv.slice(2);
const N = Number(nArg ?? 1);
const TOP = Number(topArg ?? 40);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map(); // nodeId -> us
const LAST = Number(process.env.LAST_S ?? 0) * 1e6;
let ts = p.startTime;
const tsArr = p.timeDeltas.map((d) => (ts += d));
const cutoff = LAST ? p.endTime - LAST : -Infinity;
const IDLE = new Set(
  p.nodes
    .filter(
      (n) =>
        ['(idle)', '(program)', '(garbage collector)'].includes(n.callFrame.functionName) &&
        n.callFrame.functionName === '(idle)',
    )
    .map((n) => n.id),
);
for (let i = 0; i < p.samples.length; i++) {
  if (tsArr[i] < cutoff || IDLE.has(p.samples[i])) continue;
  self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const pkgOf = (url) => {
  if (!url) return '(native/vm)';
  const m = url.match(/node_modules\/\.pnpm\/([^/]+)\/node_modules\/((@[^/]+\/)?[^/]+)/);
  if (m) return m[2];
  const m2 = url.match(/\/work\/[^/]+\/((packages|services|runner)\/[^/]+)/);
  if (m2) return m2[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  return url.slice(-60);
};
const key = (cf) =>
  `${cf.functionName || '(anon)'} ${pkgOf(cf.url)}:${cf.url.split('/').pop()}:${cf.lineNumber + 1}`;
const agg = (f) => {
  const m = new Map();
  for (const [id, t] of self) {
    const k = f(byId.get(id));
    m.set(k, (m.get(k) ?? 0) + t);
  }
  return [...m].sort((a, b) => b[1] - a[1]);
};
const fmt = (t) =>
  `${(t / 1000 / N).toFixed(3).padStart(8)} ms  ${((100 * t) / total).toFixed(1).padStart(5)}%`;
console.log(
  `total sampled ${(total / 1000).toFixed(0)} ms, per unit ${(total / 1000 / N).toFixed(2)} ms (N=${N})`,
);
console.log('\n== self by package');
for (const [k, t] of agg((n) => pkgOf(n.callFrame.url)).slice(0, 30)) console.log(fmt(t), k);
console.log('\n== self by function');
for (const [k, t] of agg((n) => key(n.callFrame)).slice(0, TOP)) console.log(fmt(t), k);
// inclusive: for each sample, walk up, count each distinct function key once
const incl = new Map();
const inclPkg = new Map();
for (const [id, t] of self) {
  const seen = new Set();
  const seenP = new Set();
  let cur = id;
  while (cur !== undefined) {
    const n = byId.get(cur);
    const k = key(n.callFrame);
    if (!seen.has(k)) {
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + t);
    }
    const pk = pkgOf(n.callFrame.url);
    if (!seenP.has(pk)) {
      seenP.add(pk);
      inclPkg.set(pk, (inclPkg.get(pk) ?? 0) + t);
    }
    cur = parent.get(cur);
  }
}
console.log('\n== inclusive by function (app code only)');
for (const [k, t] of [...incl]
  .sort((a, b) => b[1] - a[1])
  .filter(([k]) => /(packages|services|runner)\//.test(k))
  .slice(0, TOP))
  console.log(fmt(t), k);
console.log('\n== inclusive by package');
for (const [k, t] of [...inclPkg].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(fmt(t), k);
