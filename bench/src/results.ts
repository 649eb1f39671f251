import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

export const resultsDir = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? '../../results/' : '../results/', import.meta.url),
);

export const machine = () => ({
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryGiB: Math.round(totalmem() / 2 ** 30),
});

/** Merges one scenario's figures into bench/results/<date>.json (one file a day, newest run per scenario). */
export const recordResult = async (scenario: string, figures: Record<string, unknown>): Promise<string> => {
  await mkdir(resultsDir, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  const file = `${resultsDir}${date}.json`;
  let existing: { machine?: unknown; scenarios?: Record<string, unknown> } = {};
  try {
    existing = JSON.parse(await readFile(file, 'utf8')) as typeof existing;
  } catch {
    // first result of the day
  }
  const scenarios = {
    ...existing.scenarios,
    [scenario]: { measuredAt: new Date().toISOString(), ...figures },
  };
  await writeFile(file, `${JSON.stringify({ machine: machine(), scenarios }, null, 2)}\n`);
  return file;
};
