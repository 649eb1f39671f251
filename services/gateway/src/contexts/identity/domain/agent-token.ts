import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RandomSource } from './api-key.js';

/**
 * Agent tokens (docs/specification.md, "Accounts, keys and tokens", docs/specification.md, "Accounts, keys and tokens"): `<sessionId>.<expiresMs>.<buyerUserId>.<mac>`,
 * where `mac` is the unpadded base64url HMAC-SHA256 of `<sessionId>.<expiresMs>.<buyerUserId>` under
 * AGENT_TOKEN_SECRET. Self-contained: verification needs the secret and the clock, plus the buyer's account.
 */
export const AGENT_TOKEN_LIFETIME_MS = 60 * 60 * 1_000;

/** Shorter secrets would make the MAC guessable offline; 32 characters of a random string is 190+ bits. */
export const AGENT_TOKEN_SECRET_MIN_LENGTH = 32;

const SESSION_ID_BYTES = 16;
const TOKEN_FORMAT = /^([A-Za-z0-9_-]{22})\.([1-9][0-9]{0,15})\.([1-9][0-9]{0,15})\.([A-Za-z0-9_-]{43})$/;

export interface IssuedAgentToken {
  /** The only copy: never stored, never logged. */
  readonly token: string;
  readonly sessionId: string;
  readonly expiresAtMs: number;
}

/** What a well-formed, correctly signed, unexpired token says. */
export interface AgentTokenClaims {
  readonly sessionId: string;
  readonly buyerAccountId: number;
  readonly expiresAtMs: number;
}

export type AgentTokenRejection = 'malformed' | 'bad_signature' | 'expired' | 'expiry_too_far';

/**
 * Clock difference between gateway replicas that an expiry may exceed `now + AGENT_TOKEN_LIFETIME_MS` by: a
 * token one replica issued is valid on another whose clock is a little behind.
 */
export const AGENT_TOKEN_CLOCK_SKEW_MS = 60 * 1_000;

const macOf = (secret: string, signedPart: string): Buffer =>
  createHmac('sha256', secret).update(signedPart, 'utf8').digest();

export const issueAgentToken = (
  secret: string,
  buyerAccountId: number,
  nowMs: number,
  {
    lifetimeMs = AGENT_TOKEN_LIFETIME_MS,
    random = randomBytes,
  }: { lifetimeMs?: number; random?: RandomSource } = {},
): IssuedAgentToken => {
  if (!Number.isSafeInteger(buyerAccountId) || buyerAccountId < 1) {
    throw new RangeError(`not an account id: ${buyerAccountId}`);
  }
  const sessionId = random(SESSION_ID_BYTES).toString('base64url');
  if (!(lifetimeMs > 0 && lifetimeMs <= AGENT_TOKEN_LIFETIME_MS)) {
    throw new RangeError(`an agent token lives at most ${AGENT_TOKEN_LIFETIME_MS} ms, not ${lifetimeMs}`);
  }
  const expiresAtMs = nowMs + lifetimeMs;
  const signedPart = `${sessionId}.${expiresAtMs}.${buyerAccountId}`;
  return {
    token: `${signedPart}.${macOf(secret, signedPart).toString('base64url')}`,
    sessionId,
    expiresAtMs,
  };
};

/**
 * Checks a presented token. The MAC comparison is constant-time (timingSafeEqual over two 32-byte digests), and
 * the signature is checked before the expiry, so a forger learns nothing from which check failed first.
 */
export const verifyAgentToken = (
  secret: string,
  presented: string,
  nowMs: number,
): { ok: true; claims: AgentTokenClaims } | { ok: false; rejection: AgentTokenRejection } => {
  const parts = TOKEN_FORMAT.exec(presented);
  if (!parts) return { ok: false, rejection: 'malformed' };
  const [, sessionId = '', expires = '', buyer = '', mac = ''] = parts;
  // The encoded forms are compared, not the decoded bytes: 43 base64url characters carry 258 bits, so four
  // spellings of the last character decode to the same MAC, and only the canonical one is the token.
  const expected = Buffer.from(macOf(secret, `${sessionId}.${expires}.${buyer}`).toString('base64url'));
  const actual = Buffer.from(mac);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    return { ok: false, rejection: 'bad_signature' };
  }
  const expiresAtMs = Number(expires);
  const buyerAccountId = Number(buyer);
  if (!Number.isSafeInteger(expiresAtMs) || !Number.isSafeInteger(buyerAccountId)) {
    return { ok: false, rejection: 'malformed' };
  }
  if (nowMs >= expiresAtMs) return { ok: false, rejection: 'expired' };
  // docs/specification.md, "Accounts, keys and tokens": a token lives one hour. One signed for longer (a leaked secret, a past bug) is refused.
  if (expiresAtMs > nowMs + AGENT_TOKEN_LIFETIME_MS + AGENT_TOKEN_CLOCK_SKEW_MS) {
    return { ok: false, rejection: 'expiry_too_far' };
  }
  return { ok: true, claims: { sessionId, buyerAccountId, expiresAtMs } };
};
