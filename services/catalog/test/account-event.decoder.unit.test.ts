import { describe, expect, it } from '@jest/globals';
import { decodeAccountEvent } from '../src/adapters/account-event.decoder.js';
import { accountCreated } from './support/account-events.js';

describe('decodeAccountEvent', () => {
  it("keeps a seller's public profile with its version, never the email", () => {
    const fact = decodeAccountEvent(
      accountCreated(7, { role: 'seller', name: 'Acme', company: 'Acme LLC', country: 'DE' }, { version: 2 })
        .value,
    );

    expect(fact).toEqual({
      type: 'SellerAccountCreated',
      profile: { accountId: 7, name: 'Acme', company: 'Acme LLC', country: 'DE', version: 2 },
    });
  });

  it("ignores a buyer's account", () => {
    expect(decodeAccountEvent(accountCreated(8, { role: 'buyer', name: 'B' }).value)).toBeUndefined();
  });

  it('throws on a malformed account id, so the log redelivers instead of storing nonsense', () => {
    expect(() => decodeAccountEvent(accountCreated(0, { role: 'seller', name: 'X' }).value)).toThrow(
      'malformed account id',
    );
  });
});
