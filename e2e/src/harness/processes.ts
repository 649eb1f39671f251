import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from e2e/src/harness or e2e/dist/src/harness. */
export const repoRoot = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? '../../../../' : '../../../', import.meta.url),
);

/**
 * One converted word-vector table (EMBEDDINGS_CACHE_DIR) for every marketplace and embedder the tests start: a
 * fresh directory would convert it again, seconds of CPU each time. The conversion writes aside and renames, so
 * processes may share it.
 */
export const SHARED_EMBEDDINGS_CACHE_DIR = join(tmpdir(), 'marketplace-e2e-embeddings');

/** A port the OS just handed out and released: free for the child about to bind it. */
export const freePort = async (): Promise<number> => {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
};

/** A compiled entry point run as its own process, with its output kept for failure messages. */
export class ManagedProcess {
  private child: ChildProcess | undefined;
  private output = '';
  private logStream: WriteStream | undefined;

  /** `logFile`: where the output is also appended, for readers in other processes (jest's workers). */
  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: Record<string, string>,
    private readonly logFile?: string,
  ) {}

  start(): void {
    this.output = '';
    const child = spawn(process.execPath, [this.entry], {
      cwd: repoRoot,
      env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (this.logFile !== undefined) this.logStream ??= createWriteStream(this.logFile, { flags: 'a' });
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
      this.logStream?.write(chunk);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.child = child;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get logs(): string {
    return this.output;
  }

  /** The running child's process id (the benchmarks read its memory from /proc). */
  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  /** Sends a signal without waiting, e.g. SIGSTOP/SIGCONT to freeze a consumer past its ack deadline. */
  signal(signal: NodeJS.Signals): void {
    if (!this.child || !this.running) throw new Error(`${this.name} is not running`);
    this.child.kill(signal);
  }

  /** Resolves to the exit code once the process is gone (null when a signal ended it). */
  async exited(): Promise<number | null> {
    const child = this.child;
    if (!child) throw new Error(`${this.name} was never started`);
    if (!this.running) return child.exitCode;
    const [code] = (await once(child, 'exit')) as [number | null];
    return code;
  }

  /** SIGTERM or SIGINT (a graceful drain) or SIGKILL (a crash); resolves to the exit code once the process is gone. */
  async stop(
    signal: 'SIGTERM' | 'SIGINT' | 'SIGKILL' = 'SIGTERM',
    timeoutMs = 20_000,
  ): Promise<number | null> {
    const child = this.child;
    if (!child || !this.running) return child?.exitCode ?? null;
    const exited = once(child, 'exit');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      const [code] = (await exited) as [number | null];
      return code;
    } finally {
      clearTimeout(timer);
      this.logStream?.end();
      this.logStream = undefined;
    }
  }
}

/** Polls `probe` until it returns a value, or fails with `describe()` after the timeout. */
export const eventually = async <T>(
  probe: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number; describe: () => string; signal?: AbortSignal },
): Promise<T> => {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    options.signal?.throwIfAborted();
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
  throw new Error(
    `timed out after ${options.timeoutMs} ms: ${options.describe()}\nlast error: ${String(lastError)}`,
  );
};

/**
 * The loopback TCP ports a process listens on, from /proc (Linux): the sockets among its open files that
 * /proc/net/tcp lists as LISTEN on 127.0.0.1.
 */
export const loopbackListeningPorts = async (pid: number): Promise<number[]> => {
  const fds = await readdir(`/proc/${pid}/fd`);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  const inodes = new Set(links.map((link) => /^socket:\[(\d+)\]$/.exec(link)?.[1]).filter(Boolean));
  const table = await readFile(`/proc/${pid}/net/tcp`, 'utf8');
  const LOOPBACK_HEX = '0100007F';
  const LISTEN = '0A';
  return table
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter(([, local, , state, , , , , , inode]) => {
      const [ip] = (local ?? '').split(':');
      return ip === LOOPBACK_HEX && state === LISTEN && inodes.has(inode ?? '');
    })
    .map(([, local]) => Number.parseInt((local ?? '').split(':')[1] ?? '', 16));
};
