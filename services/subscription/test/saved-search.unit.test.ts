import { describe, expect, it } from '@jest/globals';
import type { AppError } from '@marketplace/platform';
import { nextAttemptAt, outcomeOfStatus } from '../src/domain/delivery-policy.js';
import { isBulkDeal, listingTermsOf, matchesQuery } from '../src/domain/saved-search.match.js';
import type { SubscriptionDraft } from '../src/domain/subscription.js';
import { validateSubscriptionDraft } from '../src/domain/subscription.rules.js';
import { newListing } from './support.js';

const violationsOf = (draft: SubscriptionDraft, anonymous = false) => {
  try {
    validateSubscriptionDraft(draft, { anonymous });
  } catch (error) {
    return (error as AppError).violations;
  }
  throw new Error('the draft was accepted');
};
const query = (raw: Record<string, unknown>) =>
  validateSubscriptionDraft({ query: raw, channels: [{ type: 'mcp_resource' }] }, { anonymous: false }).query;
const listing = (overrides: Parameters<typeof newListing>[0] = {}) => ({
  ...newListing(overrides).listing,
  sellerCountry: 'US',
});
const matches = (raw: Record<string, unknown>, overrides: Parameters<typeof newListing>[0] = {}) => {
  const facts = listing(overrides);
  return matchesQuery(query(raw), facts, listingTermsOf(facts));
};

describe('subscription rules', () => {
  it('names every bad field', () => {
    expect(
      violationsOf({
        query: {
          category: 'gadgets',
          minPrice: -1,
          maxPrice: 1.5,
          minQuantity: 0,
          sellerCountry: 'USA',
          moqRange: { min: 10, max: 5 },
          bulkDealsOnly: 'yes',
        },
        channels: [
          { type: 'webhook', url: 'ftp://example.com' },
          { type: 'email', email: 'nope' },
          { type: 'sms' },
        ],
      }).map((violation) => violation.path),
    ).toEqual([
      'query/category',
      'query/minPrice',
      'query/maxPrice',
      'query/minQuantity',
      'query/sellerCountry',
      'query/moqRange/max',
      'query/bulkDealsOnly',
      'channels/0/url',
      'channels/1/email',
      'channels/2/type',
    ]);
  });

  it('wants 1 to 5 channels and a query object', () => {
    expect(violationsOf({ query: [], channels: [] })).toEqual([
      { path: 'query', message: 'must be an object' },
      { path: 'channels', message: 'must have 1 to 5 items' },
    ]);
    const six = Array.from({ length: 6 }, () => ({ type: 'mcp_resource' }));
    expect(violationsOf({ query: {}, channels: six })[0]?.path).toBe('channels');
  });

  it('refuses a price range upside down', () => {
    expect(
      violationsOf({ query: { minPrice: 500, maxPrice: 100 }, channels: [{ type: 'mcp_resource' }] }),
    ).toEqual([{ path: 'query/maxPrice', message: 'must not be below minPrice' }]);
  });

  it('keeps unknown keys, upper-cases the country and treats null as absent', () => {
    expect(query({ sellerCountry: 'de', category: null, colour: 'blue' })).toEqual({
      sellerCountry: 'DE',
      bulkDealsOnly: false,
      original: { sellerCountry: 'de', category: null, colour: 'blue' },
    });
  });

  it('refuses one destination twice: a mailbox in any case or +tag, a URL, the resource', () => {
    // The abuse: one inbox in all five channels, five emails per match.
    const flood = ['ada@x.example', 'Ada@X.example', 'ada+1@x.example', 'ada+2@x.example', 'ADA+3@x.example'];
    expect(
      violationsOf({ query: {}, channels: flood.map((email) => ({ type: 'email', email })) }, true),
    ).toEqual(
      [1, 2, 3, 4].map((index) => ({
        path: `channels/${index}`,
        message: 'repeats the destination of channels/0',
      })),
    );
    expect(
      violationsOf({
        query: {},
        channels: [
          { type: 'webhook', url: 'https://x.example/h' },
          { type: 'mcp_resource' },
          { type: 'webhook', url: 'HTTPS://X.EXAMPLE/h' },
          { type: 'mcp_resource' },
        ],
      }).map(({ path }) => path),
    ).toEqual(['channels/2', 'channels/3']);
  });

  it('gives anonymous callers webhook and email only', () => {
    expect(violationsOf({ query: {}, channels: [{ type: 'mcp_resource' }] }, true)[0]?.path).toBe(
      'channels/0/type',
    );
    expect(
      validateSubscriptionDraft(
        {
          query: {},
          channels: [
            { type: 'email', email: 'a@example.com' },
            { type: 'webhook', url: 'https://x.example/h' },
          ],
        },
        { anonymous: true },
      ).channels,
    ).toHaveLength(2);
  });
});

describe('matching a listing', () => {
  it('matches the issue example and misses on each filter', () => {
    const example = {
      category: 'electronics',
      condition: 'customer_returns',
      maxPrice: 4_000,
      minQuantity: 500,
    };
    expect(matches(example)).toBe(true);
    expect(matches(example, { category: 'toys' })).toBe(false);
    expect(matches(example, { condition: 'salvage' })).toBe(false);
    expect(matches(example, { priceCents: 4_001 })).toBe(false);
    expect(matches(example, { quantity: 499 })).toBe(false);
    expect(matches(example, { promotePublicly: false })).toBe(false);
    expect(matches({ minPrice: 3_600 })).toBe(false);
  });

  it('matches text like the lexical catalog search: every term, plurals folded, compounds whole or by parts', () => {
    expect(matches({ search: 'wireless earbud' })).toBe(true);
    expect(matches({ search: 'Earbuds for returns' })).toBe(true);
    expect(matches({ search: 'wireless headphones' })).toBe(false);
    expect(matches({ search: 'usb-c' }, { title: 'USBC charging cables' })).toBe(true);
    expect(matches({ search: 'usbc' }, { title: 'USB-C charging cables' })).toBe(true);
    expect(matches({ search: 'earb' })).toBe(false);
  });

  it('filters on the seller country, the MOQ range and bulk deals', () => {
    expect(matches({ sellerCountry: 'us' })).toBe(true);
    expect(matches({ sellerCountry: 'DE' })).toBe(false);
    expect(matches({ moqRange: { min: 10, max: 50 } })).toBe(true);
    expect(matches({ moqRange: { max: 49 } })).toBe(false);
    expect(matches({ bulkDealsOnly: true }, { quantity: 100, priceCents: 5_000 })).toBe(false);
    expect(matches({ bulkDealsOnly: true }, { quantity: 100, priceCents: 5_001 })).toBe(true);
    expect(isBulkDeal({ quantity: 101, priceCents: 1 })).toBe(true);
  });

  it('does not match a country filter while the seller is unknown', () => {
    const facts = { ...newListing().listing };
    expect(matchesQuery(query({ sellerCountry: 'US' }), facts, listingTermsOf(facts))).toBe(false);
  });
});

describe('delivery policy', () => {
  it('retries 5xx, 429 and network errors after 1 s, 2 s and 4 s, then gives up', () => {
    const failure = { kind: 'failed', retryable: true, error: 'x' } as const;
    expect([1, 2, 3, 4].map((attempts) => nextAttemptAt(attempts, failure, 0))).toEqual([
      1_000,
      2_000,
      4_000,
      undefined,
    ]);
    expect(outcomeOfStatus(204)).toEqual({ kind: 'delivered', status: 204 });
    expect(outcomeOfStatus(429)).toMatchObject({ retryable: true });
    expect(outcomeOfStatus(503)).toMatchObject({ retryable: true });
    expect(outcomeOfStatus(410)).toMatchObject({ retryable: false });
    expect(outcomeOfStatus(302)).toMatchObject({ retryable: false });
    expect(nextAttemptAt(1, { kind: 'failed', retryable: false, error: 'x' }, 0)).toBeUndefined();
  });
});
