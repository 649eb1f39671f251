import type { Logger, ServiceHandle } from '@marketplace/platform';

/**
 * Stops handles in reverse start order, each bounded by the remaining time, then runs `finally` (closing pools).
 * Resolves to true when everything drained in time.
 */
export const drain = async (
  handles: readonly ServiceHandle[],
  options: { timeoutMs: number; logger: Logger; finally?: () => Promise<void> },
): Promise<boolean> => {
  const deadline = Date.now() + options.timeoutMs;
  let clean = true;
  for (const handle of [...handles].reverse()) {
    const stopped = await withinDeadline(handle.stop(), deadline);
    if (stopped !== 'done') {
      clean = false;
      options.logger.error({ service: handle.name, outcome: stopped }, 'service did not drain cleanly');
    }
  }
  if (options.finally) {
    const closed = await withinDeadline(options.finally(), deadline);
    if (closed !== 'done') clean = false;
  }
  return clean;
};

const withinDeadline = async (
  work: Promise<void>,
  deadline: number,
): Promise<'done' | 'timeout' | 'failed'> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work.then(() => 'done' as const), timeout]);
  } catch {
    return 'failed';
  } finally {
    clearTimeout(timer);
  }
};

/**
 * The exit status after a drain: 130 after SIGINT (128 + 2, as shells report an interrupted command, so a
 * script that pressed Ctrl-C sees an interruption), otherwise 0 when everything drained in time, 1 if not.
 */
export const exitCodeAfterDrain = (signal: NodeJS.Signals, clean: boolean): number =>
  signal === 'SIGINT' ? 130 : clean ? 0 : 1;

/**
 * Runs `onSignal` once on the first SIGTERM or SIGINT, then exits with `exitCodeAfterDrain`. A second signal
 * exits at once (130 for SIGINT, 1 otherwise).
 */
export const onShutdownSignal = (onSignal: () => Promise<boolean>): void => {
  let draining = false;
  const handle = (signal: NodeJS.Signals): void => {
    if (draining) process.exit(exitCodeAfterDrain(signal, false));
    draining = true;
    process.stderr.write(`received ${signal}, draining\n`);
    onSignal().then(
      (clean) => process.exit(exitCodeAfterDrain(signal, clean)),
      () => process.exit(exitCodeAfterDrain(signal, false)),
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
};
