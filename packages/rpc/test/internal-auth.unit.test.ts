import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import {
  configureInternalAuth,
  InternalAuthError,
  signInternalToken,
  verifyInternalToken,
} from '../src/internal-auth.js';

const KEY = randomBytes(32);
const LISTING = 'marketplace.listing.v1.ListingService';
const CATALOG = 'marketplace.catalog.v1.CatalogService';
const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const ACTOR = { kind: 'seller', id: '7' };

/** The verification cache may save work, never widen what is accepted. */
describe('verified-token cache', () => {
  let token: string;

  beforeAll(async () => {
    configureInternalAuth({ key: KEY, caller: 'gateway' });
    token = await signInternalToken(KEY, {
      caller: 'gateway',
      audience: LISTING,
      actor: ACTOR,
      issuedAtMs: NOW,
    });
  });

  it('answers concurrent calls with one token alike', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => verifyInternalToken(token, LISTING, NOW)),
    );
    expect(new Set(answers.map((answer) => JSON.stringify(answer)))).toEqual(
      new Set([JSON.stringify({ caller: 'gateway', actor: ACTOR })]),
    );
  });

  it('still refuses the token for another audience once it verified for its own', async () => {
    await verifyInternalToken(token, LISTING, NOW);
    await expect(verifyInternalToken(token, CATALOG, NOW)).rejects.toBeInstanceOf(InternalAuthError);
  });

  it('refuses a cached token once its minute and the clock tolerance have passed', async () => {
    await verifyInternalToken(token, LISTING, NOW + 64_000);
    await expect(verifyInternalToken(token, LISTING, NOW + 65_000)).rejects.toThrow('token expired');
    await expect(verifyInternalToken(token, LISTING, NOW + 66_000)).rejects.toBeInstanceOf(InternalAuthError);
  });

  it('forgets the tokens of a replaced key', async () => {
    await verifyInternalToken(token, LISTING, NOW);
    configureInternalAuth({ key: randomBytes(32), caller: 'gateway' });
    try {
      await expect(verifyInternalToken(token, LISTING, NOW)).rejects.toBeInstanceOf(InternalAuthError);
    } finally {
      configureInternalAuth({ key: KEY, caller: 'gateway' });
    }
  });

  it('refuses a key shorter than 32 bytes', () => {
    expect(() => configureInternalAuth({ key: randomBytes(16), caller: 'gateway' })).toThrow(/32 bytes/);
  });
});
