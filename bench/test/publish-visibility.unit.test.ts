import { describe, expect, it } from '@jest/globals';
import { msUntilFound, uniqueWord } from '../src/publish-visibility.js';

describe('uniqueWord', () => {
  it('is ten letters, different every time', () => {
    const words = Array.from({ length: 1_000 }, uniqueWord);
    for (const word of words) expect(word).toMatch(/^[a-z]{10}$/);
    expect(new Set(words).size).toBe(words.length);
  });
});

describe('msUntilFound', () => {
  it('polls until found and times from the given start', async () => {
    let calls = 0;
    const since = performance.now() - 100;
    const ms = await msUntilFound(async () => ++calls === 3, since, { intervalMs: 1, timeoutMs: 5_000 });
    expect(calls).toBe(3);
    expect(ms).toBeGreaterThanOrEqual(100);
  });

  it('gives up after the timeout', async () => {
    const ms = await msUntilFound(async () => false, performance.now(), { intervalMs: 1, timeoutMs: 20 });
    expect(ms).toBeUndefined();
  });
});
