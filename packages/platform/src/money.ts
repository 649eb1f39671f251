/**
 * Money is integer cents inside the system. The few inputs the specification fixes in dollars go through
 * `dollarsToCents`, which rounds half up on the decimal representation (never on binary floating point).
 */
export const dollarsToCents = (dollars: number): number => {
  if (!Number.isFinite(dollars)) throw new RangeError('amount must be a finite number');
  const negative = dollars < 0;
  // toFixed(3) pins the value to its decimal digits before rounding, so 0.285 → 0.29 and not 0.28.
  const [whole = '0', fraction = '000'] = Math.abs(dollars).toFixed(3).split('.');
  const thousandths = Number(whole) * 1000 + Number(fraction);
  const cents = Math.floor((thousandths + 5) / 10);
  return negative ? -cents : cents;
};

/** True when a dollar amount has at most two decimals. */
export const hasAtMostTwoDecimals = (dollars: number): boolean =>
  Number.isFinite(dollars) && Math.abs(Math.round(dollars * 100) - dollars * 100) < 1e-6;

export const centsToDollars = (cents: number): number => cents / 100;

export const DEFAULT_CURRENCY = 'USD';

/**
 * The discount of a price off an original retail price (docs/specification.md, "Listings": `1 - price / original retail`),
 * in whole percent. Floored, so a listing shown at "50% off" really is at least half off, and never negative
 * (a price above retail is no discount). Undefined without a positive retail price: such a listing never
 * passes a `min_discount` filter. Integer arithmetic, so a third off is 33, not 33.000000000000004.
 */
export const discountPercent = (
  priceCents: number,
  originalRetailCents: number | undefined,
): number | undefined => {
  if (originalRetailCents === undefined || originalRetailCents <= 0) return undefined;
  const saved = originalRetailCents - priceCents;
  return saved <= 0 ? 0 : Math.floor((saved * 100) / originalRetailCents);
};
