import { describe, expect, it } from '@jest/globals';
import {
  apiKeyMatches,
  apiKeyPrefixOf,
  generateApiKey,
  hashApiKey,
  isApiKeyPrefix,
  secretsEqual,
} from '../src/contexts/identity/domain/api-key.js';

describe('API keys', () => {
  it('look like lmk_<8 base32 chars>_<43 base64url chars> and carry 256 random bits of secret', () => {
    const { key, prefix } = generateApiKey();
    expect(key).toMatch(/^lmk_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(`${prefix}_`)).toBe(true);
    expect(Buffer.from(key.slice(prefix.length + 1), 'base64url')).toHaveLength(32);
  });

  it('are stored as the SHA-256 of the whole key, never the key itself', () => {
    const { key, hash } = generateApiKey();
    expect(hash).toBe(hashApiKey(key));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(key.slice(13));
  });

  it('encode the lookup prefix as base32 of the random bytes', () => {
    const zeros = (bytes: number): Buffer => Buffer.alloc(bytes, 0);
    const ones = (bytes: number): Buffer => Buffer.alloc(bytes, 0xff);
    expect(generateApiKey(zeros).prefix).toBe('lmk_aaaaaaaa');
    expect(generateApiKey(ones).prefix).toBe('lmk_77777777');
  });

  it('differ on every draw', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey().key));
    expect(keys.size).toBe(200);
  });

  it('yield their prefix only when well formed', () => {
    const { key, prefix } = generateApiKey();
    expect(apiKeyPrefixOf(key)).toBe(prefix);
    expect(isApiKeyPrefix(prefix)).toBe(true);
    for (const malformed of [
      '',
      prefix,
      `${key}x`,
      key.slice(0, -1),
      key.replace('lmk_', 'abc_'),
      ` ${key}`,
    ]) {
      expect(apiKeyPrefixOf(malformed)).toBeUndefined();
    }
    expect(isApiKeyPrefix('lmk_ABCDEFGH')).toBe(false);
    expect(isApiKeyPrefix(key)).toBe(false);
  });

  it('match only their own hash', () => {
    const first = generateApiKey();
    const second = generateApiKey();
    expect(apiKeyMatches(first.key, first.hash)).toBe(true);
    expect(apiKeyMatches(second.key, first.hash)).toBe(false);
    expect(apiKeyMatches(first.key, 'abcd')).toBe(false);
  });

  it('compare secrets of any length without throwing', () => {
    expect(secretsEqual('admin-token-0123456789', 'admin-token-0123456789')).toBe(true);
    expect(secretsEqual('admin', 'admin-token-0123456789')).toBe(false);
    expect(secretsEqual('', 'admin-token-0123456789')).toBe(false);
  });
});
