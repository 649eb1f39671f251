import type { ReadinessReport } from './http/health.routes.js';

/** One named check; it may throw or hang, both count as not ready. */
export type ReadinessCheck = () => Promise<boolean>;

/**
 * Runs every check in parallel, each bounded by `timeoutMs`, and remembers the last report so synchronous
 * callers (`ServiceHandle.isReady`) read it without waiting.
 */
export class Readiness {
  private last: ReadinessReport = { ready: false, failing: ['not checked yet'] };

  constructor(
    private readonly checks: Readonly<Record<string, ReadinessCheck>>,
    private readonly timeoutMs: number,
  ) {}

  get lastReport(): ReadinessReport {
    return this.last;
  }

  async check(): Promise<ReadinessReport> {
    const outcomes = await Promise.all(
      Object.entries(this.checks).map(async ([name, check]) => ({ name, ok: await this.bounded(check) })),
    );
    const failing = outcomes.filter(({ ok }) => !ok).map(({ name }) => name);
    this.last = { ready: failing.length === 0, failing };
    return this.last;
  }

  private async bounded(check: ReadinessCheck): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.timeoutMs);
    });
    try {
      return await Promise.race([check().catch(() => false), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
