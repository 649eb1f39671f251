import { describe, expect, it } from '@jest/globals';
import { createLogger, type ServiceHandle } from '@marketplace/platform';
import { drain, exitCodeAfterDrain } from '../src/lifecycle.js';

const logger = createLogger({ service: 'test', level: 'silent' });

const handle = (
  name: string,
  stopped: string[],
  stop: () => Promise<void> = async () => undefined,
): ServiceHandle => ({
  name,
  address: name,
  isReady: () => true,
  stop: async () => {
    await stop();
    stopped.push(name);
  },
});

describe('drain', () => {
  it('stops services in reverse start order, then closes the infrastructure', async () => {
    const stopped: string[] = [];
    const clean = await drain(
      [handle('listing', stopped), handle('catalog', stopped), handle('gateway', stopped)],
      {
        timeoutMs: 1_000,
        logger,
        finally: async () => {
          stopped.push('infrastructure');
        },
      },
    );
    expect(clean).toBe(true);
    expect(stopped).toEqual(['gateway', 'catalog', 'listing', 'infrastructure']);
  });

  it('gives up on a service that does not stop in time and reports an unclean drain', async () => {
    const stopped: string[] = [];
    const hanging = handle('stuck', stopped, () => new Promise(() => undefined));
    const started = Date.now();
    const clean = await drain([handle('listing', stopped), hanging], { timeoutMs: 200, logger });
    expect(clean).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('reports a failing stop as unclean and still stops the others', async () => {
    const stopped: string[] = [];
    const failing = handle('failing', stopped, async () => {
      throw new Error('boom');
    });
    const clean = await drain([handle('listing', stopped), failing], { timeoutMs: 1_000, logger });
    expect(clean).toBe(false);
    expect(stopped).toEqual(['listing']);
  });
});

describe('exit status after a drain', () => {
  it('is 130 after SIGINT, clean or not; after SIGTERM 0 when clean, 1 when not', () => {
    expect(exitCodeAfterDrain('SIGINT', true)).toBe(130);
    expect(exitCodeAfterDrain('SIGINT', false)).toBe(130);
    expect(exitCodeAfterDrain('SIGTERM', true)).toBe(0);
    expect(exitCodeAfterDrain('SIGTERM', false)).toBe(1);
  });
});
