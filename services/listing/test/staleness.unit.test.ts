import { describe, expect, it } from '@jest/globals';
import { staleCutoff, stalenessReminder } from '../src/domain/staleness.js';

const DAY = 24 * 60 * 60 * 1_000;

describe('staleness', () => {
  it('is stale from 90 days after the last confirmation', () => {
    const confirmedAt = Date.UTC(2026, 0, 1);
    expect(confirmedAt <= staleCutoff(confirmedAt + 90 * DAY)).toBe(true);
    expect(confirmedAt <= staleCutoff(confirmedAt + 90 * DAY - 1)).toBe(false);
  });

  it('writes a plain and an HTML reminder with the listing link, escaping what the seller typed', () => {
    const reminder = stalenessReminder({
      period: { productId: 'product_7', confirmedAt: Date.UTC(2026, 0, 1) },
      listingName: 'Chairs <b>& tables</b>',
      sellerName: 'Tarnwick',
      listingUrl: 'https://market.example/api/ucp/catalog/products/product_7',
      messageDomain: 'market.example',
    });
    expect(reminder.subject).toBe('Is "Chairs <b>& tables</b>" still available? (product_7)');
    expect(reminder.text).toContain('https://market.example/api/ucp/catalog/products/product_7');
    expect(reminder.text).toContain('since 2026-01-01');
    expect(reminder.html).toContain('<a href="https://market.example/api/ucp/catalog/products/product_7">');
    expect(reminder.html).toContain('Chairs &#60;b&#62;&#38; tables&#60;/b&#62;');
    expect(reminder.html).not.toContain('<b>');
    expect(reminder.messageId).toBe(`<staleness.product_7.${Date.UTC(2026, 0, 1)}@market.example>`);
  });
});
