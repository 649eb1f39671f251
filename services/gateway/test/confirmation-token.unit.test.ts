import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { ConfirmationClaims, PricedContent } from '../src/contexts/orders/domain/confirmation-token.js';
import {
  changesBetween,
  digestOf,
  signConfirmation,
  verifyConfirmation,
} from '../src/contexts/orders/domain/confirmation-token.js';

const KEY = randomBytes(32);
const content: PricedContent = {
  status: 'ready_for_complete',
  lines: [
    {
      product_id: 'product_7',
      quantity: 500,
      unit_price: 1_000,
      line_total: 500_000,
      freight: 15_000,
      quote_request_id: 3,
    },
  ],
  total: 515_000,
  currency: 'USD',
  shippingCountry: 'US',
};
const claims: ConfirmationClaims = {
  jti: 'confirm-abc',
  accountId: 21,
  expiresAt: 1_000,
  previewed: content,
};

describe('checkout confirmation tokens', () => {
  it('verifies what the key signed, and nothing altered, forged or signed by another key', () => {
    const token = signConfirmation(KEY, claims);
    expect(verifyConfirmation(KEY, token)).toEqual(claims);
    expect(verifyConfirmation(randomBytes(32), token)).toBeUndefined();
    const [payload, signature] = token.slice(4).split('.');
    const cheaper = { ...claims, previewed: { ...content, total: 1 } };
    const altered = `pct_${Buffer.from(JSON.stringify(cheaper)).toString('base64url')}.${signature}`;
    expect(verifyConfirmation(KEY, altered)).toBeUndefined();
    for (const forged of [
      '',
      'pct_',
      `pct_${payload}`,
      `pct_${payload}.${signature}.x`,
      `xyz_${payload}.${signature}`,
    ]) {
      expect(verifyConfirmation(KEY, forged)).toBeUndefined();
    }
  });

  it('refuses a signed payload that is not a confirmation', () => {
    const odd = signConfirmation(KEY, { ...claims, previewed: { ...content, lines: [{}] } } as never);
    expect(verifyConfirmation(KEY, odd)).toBeUndefined();
  });

  it('digests the priced content, so any change of price, freight, quantity, status or destination shows', () => {
    const same = digestOf({ ...content, lines: content.lines.map((line) => ({ ...line })) });
    expect(same).toBe(digestOf(content));
    const line = content.lines[0]!;
    for (const changed of [
      { ...content, status: 'requires_escalation' },
      { ...content, lines: [{ ...line, unit_price: 1_001 }] },
      { ...content, lines: [{ ...line, quantity: 499 }] },
      { ...content, lines: [{ ...line, freight: 20_000 }] },
      { ...content, shippingCountry: 'DE' },
    ]) {
      expect(digestOf(changed)).not.toBe(same);
    }
    expect(
      changesBetween(content, {
        ...content,
        lines: [{ ...line, unit_price: 1_100, line_total: 550_000, freight: 20_000 }],
        total: 570_000,
      }),
    ).toEqual([
      'product_7: unit price 1000 → 1100 cents',
      'product_7: freight 15000 → 20000 cents',
      'total 515000 → 570000 cents',
    ]);
  });
});
