import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RandomSource } from './api-key.js';

/**
 * Agent tokens (spec 5, decisions "Accounts, keys and tokens"): `<sessionId>.<expiresMs>.<buyerUserId>.<mac>`,
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

export type AgentTokenRejection = 'malformed' | 'bad_signature' | 'expired';

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
  const expected = macOf(secret, `${sessionId}.${expires}.${buyer}`);
  const actual = Buffer.from(mac, 'base64url');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    return { ok: false, rejection: 'bad_signature' };
  }
  const expiresAtMs = Number(expires);
  const buyerAccountId = Number(buyer);
  if (!Number.isSafeInteger(expiresAtMs) || !Number.isSafeInteger(buyerAccountId)) {
    return { ok: false, rejection: 'malformed' };
  }
  if (nowMs >= expiresAtMs) return { ok: false, rejection: 'expired' };
  return { ok: true, claims: { sessionId, buyerAccountId, expiresAtMs } };
};
