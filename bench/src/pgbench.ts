import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PgbenchOptions {
  readonly databaseUrl: string;
  /** A pgbench custom script (`-f`): one transaction of the shape to measure. */
  readonly script: string;
  readonly clients: number;
  readonly durationS: number;
}

export interface PgbenchFigures {
  readonly transactionsPerSecond: number;
  readonly latencyAverageMs: number;
}

/**
 * Runs the `pgbench` of the PostgreSQL client tools (Debian: postgresql-client) with a custom script, no vacuum
 * and no initialisation, and reads its summary: the database's own ceiling for a transaction shape, to compare a
 * service's throughput with.
 */
export const runPgbench = async (options: PgbenchOptions): Promise<PgbenchFigures> => {
  const directory = await mkdtemp(join(tmpdir(), 'pgbench-'));
  try {
    const script = join(directory, 'transaction.sql');
    await writeFile(script, options.script);
    const { stdout } = await run(
      'pgbench',
      [
        '--no-vacuum',
        `--client=${options.clients}`,
        `--jobs=${Math.min(options.clients, 2)}`,
        `--time=${options.durationS}`,
        `--file=${script}`,
        options.databaseUrl,
      ],
      { maxBuffer: 1024 * 1024 },
    );
    const tps = /tps = ([0-9.]+) \(without initial connection time\)/.exec(stdout)?.[1];
    const latency = /latency average = ([0-9.]+) ms/.exec(stdout)?.[1];
    if (tps === undefined || latency === undefined) throw new Error(`unexpected pgbench output:\n${stdout}`);
    return { transactionsPerSecond: Number(tps), latencyAverageMs: Number(latency) };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
};
