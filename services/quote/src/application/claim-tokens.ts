import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'qct_';

/**
 * Claim tokens of anonymous quote requests (docs/specification.md, "Quotes"): an HMAC of the request id under the
 * service's claim key, so nothing secret is stored per request or travels on the log, a retry answers the same
 * token, and the buyer's email can carry it.
 */
export class ClaimTokens {
  constructor(private readonly key: Buffer) {}

  tokenOf(quoteRequestId: number): string {
    const mac = createHmac('sha256', this.key).update(`quote-claim:v1:${quoteRequestId}`).digest('base64url');
    return `${PREFIX}${mac}`;
  }

  matches(quoteRequestId: number, token: string): boolean {
    const expected = Buffer.from(this.tokenOf(quoteRequestId));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
