import { describe, expect, it } from '@jest/globals';
import { AppError } from '@marketplace/platform';
import fc from 'fast-check';
import {
  canonicalJson,
  idempotencyConflict,
  idempotencyKeyProblem,
  idempotencyScopeOf,
  idempotentRequestOf,
  requestHashOf,
} from '../src/index.js';

describe('idempotency key validation', () => {
  it.each([
    ['a UUID', '0f8e2f4c-2b7a-4d2e-9b1c-3f5d6a7b8c9d'],
    ['one character', 'k'],
    ['255 characters', 'k'.repeat(255)],
    ['inner spaces and punctuation', 'order 42/retry #1 ~ {ok}'],
  ])('accepts %s', (_name, key) => {
    expect(idempotencyKeyProblem(key)).toBeUndefined();
  });

  it.each([
    ['empty', '', 'must not be empty'],
    ['256 characters', 'k'.repeat(256), 'must be at most 255 characters'],
    ['a leading space', ' key', 'must be printable ASCII without leading or trailing spaces'],
    ['a trailing space', 'key ', 'must be printable ASCII without leading or trailing spaces'],
    ['a tab', 'a\tb', 'must be printable ASCII without leading or trailing spaces'],
    ['a line break', 'a\nb', 'must be printable ASCII without leading or trailing spaces'],
    ['DEL', 'a\u007fb', 'must be printable ASCII without leading or trailing spaces'],
    ['non-ASCII', 'clé', 'must be printable ASCII without leading or trailing spaces'],
  ])('refuses %s', (_name, key, problem) => {
    expect(idempotencyKeyProblem(key)).toBe(problem);
  });

  it('refuses every key with a character outside printable ASCII', () => {
    const outside = fc
      .integer({ min: 0, max: 0x2ff })
      .filter((code) => code < 0x20 || code > 0x7e)
      .map((code) => String.fromCharCode(code));
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        outside,
        fc.string({ maxLength: 20 }),
        (before, bad, after) => {
          expect(idempotencyKeyProblem(`k${before}${bad}${after}k`)).toBeDefined();
        },
      ),
    );
  });

  it('turns a malformed key into a field violation on the given path, before hashing anything', () => {
    let thrown: unknown;
    try {
      idempotentRequestOf('', { path: 'idempotency_key', scope: 'anonymous', operation: 'Op', request: {} });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({
      kind: 'validation',
      violations: [{ path: 'idempotency_key', message: 'must not be empty' }],
    });
  });

  it('binds a well-formed key to its scope and request hash; no key means no idempotent request', () => {
    const options = { path: 'k', scope: 'account:7', operation: 'CreateListing', request: { a: 1 } } as const;
    expect(idempotentRequestOf(undefined, options)).toBeUndefined();
    expect(idempotentRequestOf('key-1', options)).toEqual({
      scope: 'account:7',
      key: 'key-1',
      requestHash: requestHashOf('CreateListing', { a: 1 }),
    });
  });
});

describe('request hashing', () => {
  it('ignores the order of object keys and undefined members, at every depth', () => {
    const built = { draft: { name: 'Lot', price: 100, sku: undefined }, sellerAccountId: 7 };
    const reordered = { sellerAccountId: 7, draft: { price: 100, name: 'Lot' } };
    expect(canonicalJson(built)).toBe('{"draft":{"name":"Lot","price":100},"sellerAccountId":7}');
    expect(requestHashOf('CreateListing', built)).toBe(requestHashOf('CreateListing', reordered));
  });

  it('tells apart a changed value, a changed array order, an added field and another operation', () => {
    const request = { lines: [{ productId: 'product_1' }, { productId: 'product_2' }], quantity: 1 };
    const hash = requestHashOf('CreateCheckout', request);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(requestHashOf('CreateCheckout', { ...request, quantity: 2 })).not.toBe(hash);
    expect(requestHashOf('CreateCheckout', { ...request, lines: [...request.lines].reverse() })).not.toBe(
      hash,
    );
    expect(requestHashOf('CreateCheckout', { ...request, note: null })).not.toBe(hash);
    expect(requestHashOf('QuickBuy', request)).not.toBe(hash);
  });

  it('gives equal hashes to JSON-equal values however their keys were ordered', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), (value) => {
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        expect(requestHashOf('Op', reversed)).toBe(requestHashOf('Op', value));
      }),
    );
  });
});

describe('idempotency scopes', () => {
  it('scopes by account first, then by the lower-cased buyer email, else the shared anonymous scope', () => {
    expect(idempotencyScopeOf({ accountId: 7, email: 'Buyer@Example.com' })).toBe('account:7');
    expect(idempotencyScopeOf({ email: ' Buyer@Example.COM ' })).toBe('email:buyer@example.com');
    expect(idempotencyScopeOf({ email: '' })).toBe('anonymous');
    expect(idempotencyScopeOf({})).toBe('anonymous');
  });
});

describe('idempotency conflicts', () => {
  it('are their own error kind, naming the machine-readable code and the key', () => {
    const conflict = idempotencyConflict('key-1');
    expect(conflict.kind).toBe('idempotency_conflict');
    expect(conflict.message).toMatch(/^idempotency_conflict: .*"key-1"/);
  });
});
