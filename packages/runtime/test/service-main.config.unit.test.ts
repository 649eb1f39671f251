import { describe, expect, it } from '@jest/globals';
import { parseEnv } from '@marketplace/platform';
import { serviceMainConfigSchema } from '../src/run-service.js';

const KEY = 'k'.repeat(32);

describe('service main configuration', () => {
  it('reads the migrate-only flag, off by default, and names it when malformed', () => {
    const env = { INTERNAL_AUTH_KEY: KEY };
    expect(parseEnv(serviceMainConfigSchema, env).MIGRATE_ONLY).toBe(false);
    expect(parseEnv(serviceMainConfigSchema, { ...env, MIGRATE_ONLY: 'true' }).MIGRATE_ONLY).toBe(true);
    expect(() => parseEnv(serviceMainConfigSchema, { ...env, MIGRATE_ONLY: 'yes' })).toThrow(/MIGRATE_ONLY/);
  });

  it('requires the internal-call key, 32 bytes at least, and never repeats it in the message', () => {
    expect(parseEnv(serviceMainConfigSchema, { INTERNAL_AUTH_KEY: KEY }).INTERNAL_AUTH_KEY).toEqual(
      Buffer.from(KEY),
    );
    expect(() => parseEnv(serviceMainConfigSchema, {})).toThrow(/INTERNAL_AUTH_KEY/);
    const short = 'too-short-secret-value';
    expect(() => parseEnv(serviceMainConfigSchema, { INTERNAL_AUTH_KEY: short })).toThrow(
      /INTERNAL_AUTH_KEY: use at least 32 bytes/,
    );
    expect(() => parseEnv(serviceMainConfigSchema, { INTERNAL_AUTH_KEY: short })).not.toThrow(short);
  });
});
