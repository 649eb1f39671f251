import type { orderV1 } from '@marketplace/proto';
import { toIso } from '@marketplace/platform';

/** docs/specification.md, "Checkout and orders": exactly these columns, in this order. */
export const ORDER_CSV_COLUMNS = [
  'Order ID',
  'Product',
  'Buyer',
  'Quantity',
  'Total',
  'Status',
  'Date',
] as const;

/**
 * A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV injection"); such a cell gets
 * a leading apostrophe, which spreadsheets show as text and do not evaluate.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

const neutralised = (value: string): string => (FORMULA_START.test(value) ? `'${value}` : value);

/** RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled. */
const quoted = (value: string): string =>
  /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;

export const csvCell = (value: string | number): string => quoted(neutralised(String(value)));

/** Who bought: the company, else the name, else the email the buyer gave, else the account. */
const buyerOf = (order: orderV1.Order): string =>
  order.buyer?.company || order.buyer?.name || order.buyer?.email || `account ${order.buyerAccountId}`;

/**
 * The CSV export of orders (bulk_export_orders): a header and one row per order, CRLF line ends (RFC 4180).
 * Total is in integer cents like every amount the marketplace emits; Date is when the order was placed.
 */
export const ordersCsv = (orders: readonly orderV1.Order[]): string =>
  [
    ORDER_CSV_COLUMNS.join(','),
    ...orders.map((order) =>
      [
        order.orderId,
        order.productName,
        buyerOf(order),
        order.quantity,
        order.totalCents,
        order.status,
        toIso(order.placedAtMs),
      ]
        .map(csvCell)
        .join(','),
    ),
  ]
    .map((line) => `${line}\r\n`)
    .join('');
