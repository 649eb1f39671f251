import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The confirmation token of a checkout preview (docs/specification.md, "Preview and confirm"): signed, bound to
 * the account, to a digest of exactly the previewed content, and to the lines to price again; valid a few
 * minutes. Pure: the key and the clock are given.
 */
export const CONFIRMATION_TOKEN_PREFIX = 'pct_';
export const CONFIRMATION_TTL_MS = 5 * 60_000;

export interface ConfirmationClaims {
  /** Unique per preview: the idempotency key of the confirmation's checkout, so a replay finds its order. */
  readonly jti: string;
  readonly accountId: number;
  readonly expiresAt: number;
  /** Exactly what the preview showed; the confirmation prices the same lines again and compares. */
  readonly previewed: PricedContent;
}

const signatureOf = (key: Buffer, payload: string): Buffer =>
  createHmac('sha256', key).update(`checkout-confirmation.v1.${payload}`).digest();

export const signConfirmation = (key: Buffer, claims: ConfirmationClaims): string => {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${CONFIRMATION_TOKEN_PREFIX}${payload}.${signatureOf(key, payload).toString('base64url')}`;
};

type PricedLine = PricedContent['lines'][number];

const isLine = (value: unknown): value is PricedLine => {
  const line = value as PricedLine;
  return (
    typeof line === 'object' &&
    line !== null &&
    typeof line.product_id === 'string' &&
    Number.isSafeInteger(line.quantity) &&
    Number.isSafeInteger(line.unit_price) &&
    Number.isSafeInteger(line.line_total) &&
    Number.isSafeInteger(line.freight) &&
    (line.quote_request_id === undefined || Number.isSafeInteger(line.quote_request_id))
  );
};

const isContent = (value: unknown): value is PricedContent => {
  const content = value as PricedContent;
  return (
    typeof content === 'object' &&
    content !== null &&
    typeof content.status === 'string' &&
    Array.isArray(content.lines) &&
    content.lines.every(isLine) &&
    Number.isSafeInteger(content.total) &&
    typeof content.currency === 'string' &&
    (content.shippingCountry === undefined || typeof content.shippingCountry === 'string')
  );
};

/** The claims of a token this key signed; undefined for anything else (forged, altered, malformed). */
export const verifyConfirmation = (key: Buffer, token: string): ConfirmationClaims | undefined => {
  if (!token.startsWith(CONFIRMATION_TOKEN_PREFIX)) return undefined;
  const [payload, signature, ...rest] = token.slice(CONFIRMATION_TOKEN_PREFIX.length).split('.');
  if (payload === undefined || signature === undefined || rest.length > 0) return undefined;
  const expected = signatureOf(key, payload);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as ConfirmationClaims;
    const valid =
      typeof claims.jti === 'string' &&
      Number.isSafeInteger(claims.accountId) &&
      Number.isSafeInteger(claims.expiresAt) &&
      isContent(claims.previewed);
    return valid ? claims : undefined;
  } catch {
    return undefined;
  }
};

/** What a confirmation is bound to: every priced line, the totals, the destination and whether it escalates. */
export interface PricedContent {
  readonly status: string;
  readonly lines: readonly {
    readonly product_id: string;
    readonly quantity: number;
    readonly unit_price: number;
    readonly line_total: number;
    /** The line's freight: a change of freight terms between preview and confirm is a change (409). */
    readonly freight: number;
    readonly quote_request_id?: number | undefined;
  }[];
  readonly total: number;
  readonly currency: string;
  readonly shippingCountry?: string | undefined;
}

export const digestOf = (content: PricedContent): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        content.status,
        content.lines.map((line) => [
          line.product_id,
          line.quantity,
          line.unit_price,
          line.line_total,
          line.freight,
          line.quote_request_id ?? null,
        ]),
        content.total,
        content.currency,
        content.shippingCountry ?? null,
      ]),
    )
    .digest('base64url');

/** In words, what differs between the previewed and the current content (for the 409). */
export const changesBetween = (before: PricedContent, after: PricedContent): string[] => {
  const changes: string[] = [];
  if (before.status !== after.status) changes.push(`status ${before.status} → ${after.status}`);
  after.lines.forEach((line, index) => {
    const was = before.lines[index];
    if (was === undefined) return;
    if (was.unit_price !== line.unit_price) {
      changes.push(`${line.product_id}: unit price ${was.unit_price} → ${line.unit_price} cents`);
    }
    if (was.freight !== line.freight) {
      changes.push(`${line.product_id}: freight ${was.freight} → ${line.freight} cents`);
    }
  });
  if (before.total !== after.total) changes.push(`total ${before.total} → ${after.total} cents`);
  return changes.length > 0 ? changes : ['the priced content'];
};
