import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DATA_DIR_LOCK_FILE, DataDirLockedError, lockDataDir } from '../src/data-dir.lock.js';

/** The id of a process that has exited: what a lock left by a killed marketplace holds. */
const deadPid = (): number => {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
};

describe('data directory lock', () => {
  let dataDir: string;
  const lockFile = () => join(dataDir, DATA_DIR_LOCK_FILE);

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'data-dir-lock-'));
  });

  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes this process id, refuses while a live process holds it, and is free again once released', () => {
    const lock = lockDataDir(dataDir);
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(lockFile())).toBe(false);

    // The test runner's parent process is alive and is not this one.
    writeFileSync(lockFile(), `${process.ppid}\n`);
    expect(() => lockDataDir(dataDir)).toThrow(DataDirLockedError);
    expect(() => lockDataDir(dataDir)).toThrow(
      `DATA_DIR ${dataDir} is in use by another marketplace (process ${process.ppid})`,
    );
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(process.ppid));
  });

  it('takes over a stale lock whose process is gone, and an empty one', () => {
    writeFileSync(lockFile(), `${deadPid()}\n`);
    const lock = lockDataDir(dataDir);
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
    writeFileSync(lockFile(), '');
    lockDataDir(dataDir).release();
    expect(existsSync(lockFile())).toBe(false);
  });

  it('is released when its process exits, and left behind (stale) when it is killed', async () => {
    // The built module (`tsc -b` runs before the tests): a plain node process cannot load TypeScript sources.
    const module = new URL('../dist/src/data-dir.lock.js', import.meta.url).pathname;
    const holder = (exit: string) =>
      spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { lockDataDir } from ${JSON.stringify(module)};
           lockDataDir(${JSON.stringify(dataDir)}); process.stdout.write('locked\\n'); ${exit}`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
    const exiting = holder('setTimeout(() => process.exit(0), 10);');
    expect((await once(exiting, 'exit'))[0]).toBe(0);
    expect(existsSync(lockFile())).toBe(false);

    const killed = holder('setInterval(() => undefined, 1000);');
    await once(killed.stdout, 'data');
    expect(() => lockDataDir(dataDir)).toThrow(DataDirLockedError);
    killed.kill('SIGKILL');
    await once(killed, 'exit');
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(killed.pid));
    lockDataDir(dataDir).release();
  });
});
