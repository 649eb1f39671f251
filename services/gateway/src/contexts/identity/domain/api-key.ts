import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `lmk_k3x9q2ab_<43 base64url chars>`: a brand that secret scanners and humans recognise,
 * an 8-character lookup id (40 random bits, base32) and a 256-bit secret. The lookup prefix `lmk_k3x9q2ab` is
 * stored in clear to find the key's row and to name it for revocation; the whole key is stored only as its
 * SHA-256 (a fast hash is enough for 256 random bits: there is nothing to brute-force).
 */
export const API_KEY_BRAND = 'lmk';
const LOOKUP_LENGTH = 8;
const SECRET_BYTES = 32;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

const KEY_FORMAT = /^(lmk_[a-z2-7]{8})_[A-Za-z0-9_-]{43}$/;
const PREFIX_FORMAT = /^lmk_[a-z2-7]{8}$/;

export interface GeneratedApiKey {
  /** The whole key: shown once to its owner, never stored or logged. */
  readonly key: string;
  /** `lmk_<lookup>`: stored in clear, names the key in the admin API. */
  readonly prefix: string;
  /** Hex SHA-256 of the whole key. */
  readonly hash: string;
}

/** `bytes` random bytes; injectable so tests can check the format with known input. */
export type RandomSource = (bytes: number) => Buffer;

export const generateApiKey = (random: RandomSource = randomBytes): GeneratedApiKey => {
  const prefix = `${API_KEY_BRAND}_${base32(random(5)).slice(0, LOOKUP_LENGTH)}`;
  const key = `${prefix}_${random(SECRET_BYTES).toString('base64url')}`;
  return { key, prefix, hash: hashApiKey(key) };
};

/** The lookup prefix of a well-formed key, or undefined for anything else. */
export const apiKeyPrefixOf = (candidate: string): string | undefined => KEY_FORMAT.exec(candidate)?.[1];

export const isApiKeyPrefix = (candidate: string): boolean => PREFIX_FORMAT.test(candidate);

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** Constant-time check of a presented key against a stored hash. */
export const apiKeyMatches = (presented: string, storedHash: string): boolean => {
  const expected = Buffer.from(storedHash, 'hex');
  const actual = Buffer.from(hashApiKey(presented), 'hex');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
};

/**
 * Constant-time equality of two secrets of any length: both sides are hashed first, so neither the content
 * nor the length of the expected secret leaks through timing.
 */
export const secretsEqual = (presented: string, expected: string): boolean =>
  timingSafeEqual(
    createHash('sha256').update(presented, 'utf8').digest(),
    createHash('sha256').update(expected, 'utf8').digest(),
  );

/** RFC 4648 base32, lower case, unpadded: 5 bytes give exactly 8 characters. */
const base32 = (bytes: Buffer): string => {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
};
