import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ConfigError, envList, envPort, parseEnv } from '../src/config.js';

const schema = z.object({
  PORT: envPort(8080),
  HOSTS: envList().default([]),
  MODE: z.enum(['a', 'b']).default('a'),
});

describe('parseEnv', () => {
  it('applies defaults and treats empty strings as unset', () => {
    expect(parseEnv(schema, { PORT: '', MODE: undefined })).toEqual({ PORT: 8080, HOSTS: [], MODE: 'a' });
  });
  it('parses lists', () => {
    expect(parseEnv(schema, { HOSTS: 'a.example, 10.0.0.0/8,' }).HOSTS).toEqual(['a.example', '10.0.0.0/8']);
  });
  it('names the bad variable', () => {
    expect(() => parseEnv(schema, { PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => parseEnv(schema, { PORT: '70000' })).toThrow(/PORT/);
    expect(() => parseEnv(schema, { MODE: 'c' })).toThrow(/MODE/);
  });
});
