import { describe, expect, it } from '@jest/globals';
import { parseEnv } from '@marketplace/platform';
import { serviceMainConfigSchema } from '../src/run-service.js';

describe('service main configuration', () => {
  it('reads the migrate-only flag, off by default, and names it when malformed', () => {
    expect(parseEnv(serviceMainConfigSchema, {}).MIGRATE_ONLY).toBe(false);
    expect(parseEnv(serviceMainConfigSchema, { MIGRATE_ONLY: 'true' }).MIGRATE_ONLY).toBe(true);
    expect(() => parseEnv(serviceMainConfigSchema, { MIGRATE_ONLY: 'yes' })).toThrow(/MIGRATE_ONLY/);
  });
});
