import { execFileSync, spawnSync } from 'node:child_process';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { eventually } from '../src/harness/processes.js';
import { pause } from './steady-load.js';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const NATS_BINARY = '/usr/sbin/nats-server';

/**
 * The machine's NATS server, started as the machine notes say. It is shared by every test on the machine:
 * a fault run that kills it must bring it back, whatever happens (see `ensureRunning`).
 */
export const natsServer = {
  /** Starts the server unless it runs (idempotent, synchronous so that an exit handler may call it). */
  ensureRunning(): void {
    spawnSync(
      'start-stop-daemon',
      [
        '--start',
        '--oknodo',
        '--background',
        '--exec',
        NATS_BINARY,
        '--',
        '-a',
        '127.0.0.1',
        '-p',
        '4222',
        '-js',
        '-sd',
        '/var/lib/nats-server',
        '-l',
        '/var/log/nats-server.log',
      ],
      { stdio: 'ignore' },
    );
  },

  /** kill -9 of the server; resolves once it is gone. */
  async kill(): Promise<void> {
    const pids = execFileSync('pidof', ['nats-server']).toString().trim().split(/\s+/).map(Number);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await eventually(async () => (pids.every((pid) => !isAlive(pid)) ? true : undefined), {
      timeoutMs: 10_000,
      describe: () => `nats-server ${pids.join(',')} still alive after SIGKILL`,
    });
  },

  /** Resolves once JetStream answers again. */
  async waitUntilServing(): Promise<void> {
    await eventually(
      async () => {
        const connection = await connect({ servers: NATS_URL, timeout: 1_000, reconnect: false });
        try {
          await (await jetstreamManager(connection)).getAccountInfo();
          return true;
        } finally {
          await connection.close();
        }
      },
      { timeoutMs: 30_000, intervalMs: 200, describe: () => 'JetStream did not come back' },
    );
  },

  /** Kills the server, keeps it down for `downMs`, starts it again and waits for JetStream. */
  async crash(downMs: number): Promise<void> {
    try {
      await this.kill();
      await pause(downMs);
    } finally {
      this.ensureRunning();
    }
    await this.waitUntilServing();
  },
};

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
