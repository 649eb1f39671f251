import { describe, expect, it } from '@jest/globals';
import { parseEnv } from '@marketplace/platform';
import { infrastructureConfigSchema } from '../src/infrastructure.config.js';

describe('infrastructure configuration', () => {
  it('defaults to the embedded adapters', () => {
    const config = parseEnv(infrastructureConfigSchema, {});
    expect(config).toMatchObject({ EVENT_LOG: 'embedded', DATA_DIR: './data', EVENT_LOG_NAMESPACE: '' });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('names the variable that is wrong', () => {
    expect(() => parseEnv(infrastructureConfigSchema, { EVENT_LOG: 'rabbit' })).toThrow(/EVENT_LOG/);
    expect(() => parseEnv(infrastructureConfigSchema, { DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => parseEnv(infrastructureConfigSchema, { EVENT_LOG_NAMESPACE: 'Has Space' })).toThrow(
      /EVENT_LOG_NAMESPACE/,
    );
  });

  it('gathers a busy partition into batches every 100 ms unless told otherwise, 0 meaning at once', () => {
    expect(parseEnv(infrastructureConfigSchema, {}).EVENT_LOG_BATCH_INTERVAL_MS).toBe(100);
    expect(
      parseEnv(infrastructureConfigSchema, { EVENT_LOG_BATCH_INTERVAL_MS: '0' }).EVENT_LOG_BATCH_INTERVAL_MS,
    ).toBe(0);
    expect(() => parseEnv(infrastructureConfigSchema, { EVENT_LOG_BATCH_INTERVAL_MS: '-1' })).toThrow(
      /EVENT_LOG_BATCH_INTERVAL_MS/,
    );
  });

  it('reads broker lists', () => {
    expect(parseEnv(infrastructureConfigSchema, { KAFKA_BROKERS: 'a:9092,b:9092' }).KAFKA_BROKERS).toEqual([
      'a:9092',
      'b:9092',
    ]);
  });
});
