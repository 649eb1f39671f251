import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The lock file of a data directory: the process id of the marketplace that holds it. */
export const DATA_DIR_LOCK_FILE = 'marketplace.lock';

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another marketplace (process ${holderPid}): ` +
        'stop it, or start this one with another DATA_DIR',
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  /** Removes the lock file if this process still holds it; idempotent. Also runs when the process exits. */
  release(): void;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const holderOf = (path: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
};

/**
 * Takes the data directory for this process, so two marketplaces never share one embedded database: creates
 * `<dataDir>/marketplace.lock` exclusively with this process's id. A lock whose process is gone (killed, crashed)
 * is stale and taken over; a live holder makes this throw DataDirLockedError. The lock is released when the
 * process exits, however it exits (a SIGKILL leaves a stale lock, which the next start takes over).
 * A process id reused by an unrelated process after a crash would keep the lock: deleting the file frees it.
 */
export const lockDataDir = (dataDir: string): DataDirLock => {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, DATA_DIR_LOCK_FILE);
  // Written whole under a name of our own, then linked into place: the link either creates the lock with its
  // content or fails, so no other process ever reads a half-written lock.
  const candidate = `${path}.${process.pid}`;
  writeFileSync(candidate, `${process.pid}\n`);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(candidate, path);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = holderOf(path);
        if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
          throw new DataDirLockedError(dataDir, holder);
        }
        // Its process is gone: take the lock over, once (a second failure means another start took it first).
        if (attempt > 0) throw new Error(`could not take the lock ${path}`, { cause: error });
        rmSync(path, { force: true });
      }
    }
  } finally {
    rmSync(candidate, { force: true });
  }
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.off('exit', release);
    if (holderOf(path) === process.pid) rmSync(path, { force: true });
  };
  process.on('exit', release);
  return { release };
};
