import { describe, expect, it } from '@jest/globals';
import { orderV1 } from '@marketplace/proto';
import { csvCell, ordersCsv } from '../src/contexts/orders/order-csv.js';

describe('order CSV export', () => {
  it('neutralises every formula start and quotes per RFC 4180', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+33 1')).toBe("'+33 1");
    expect(csvCell('-2')).toBe("'-2");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell('\rx')).toBe('"\'\rx"');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(42)).toBe('42');
  });

  it('has exactly the columns of the specification, one CRLF-ended row per order', () => {
    const order = orderV1.Order.fromPartial({
      orderId: 12,
      productName: '=HYPERLINK("http://x","y")',
      buyer: { email: 'b@example.com', name: 'Bea', company: '' },
      quantity: 3,
      totalCents: 2_400,
      status: 'shipped',
      placedAtMs: Date.UTC(2026, 8, 1, 12),
    });
    expect(ordersCsv([order])).toBe(
      'Order ID,Product,Buyer,Quantity,Total,Status,Date\r\n' +
        '12,"\'=HYPERLINK(""http://x"",""y"")",Bea,3,2400,shipped,2026-09-01T12:00:00.000Z\r\n',
    );
    expect(ordersCsv([])).toBe('Order ID,Product,Buyer,Quantity,Total,Status,Date\r\n');
  });
});
