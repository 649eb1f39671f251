/** Time is epoch milliseconds inside the system; injected so deciders and jobs are testable. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current: number) {}
  now(): number {
    return this.current;
  }
  set(epochMs: number): void {
    this.current = epochMs;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export const toIso = (epochMs: number): string => new Date(epochMs).toISOString();
