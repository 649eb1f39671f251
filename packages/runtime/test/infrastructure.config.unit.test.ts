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

  it('reads broker lists', () => {
    expect(parseEnv(infrastructureConfigSchema, { KAFKA_BROKERS: 'a:9092,b:9092' }).KAFKA_BROKERS).toEqual([
      'a:9092',
      'b:9092',
    ]);
  });
});
