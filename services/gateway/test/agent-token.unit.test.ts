import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  AGENT_TOKEN_CLOCK_SKEW_MS,
  AGENT_TOKEN_LIFETIME_MS,
  issueAgentToken,
  verifyAgentToken,
} from '../src/contexts/identity/domain/agent-token.js';

const SECRET = 'agent-token-secret-of-at-least-32-chars';
const NOW = Date.UTC(2026, 0, 1, 12);
const fixedRandom = (bytes: number): Buffer => Buffer.alloc(bytes, 7);

describe('agent tokens', () => {
  const issued = issueAgentToken(SECRET, 42, NOW, { random: fixedRandom });

  it('has the four parts of docs/specification.md, "Accounts, keys and tokens", expiring after an hour', () => {
    const [sessionId, expires, buyer, mac] = issued.token.split('.');
    expect(issued.token.split('.')).toHaveLength(4);
    expect(sessionId).toBe(fixedRandom(16).toString('base64url'));
    expect(Number(expires)).toBe(NOW + AGENT_TOKEN_LIFETIME_MS);
    expect(buyer).toBe('42');
    expect(mac).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(issued.expiresAtMs).toBe(NOW + AGENT_TOKEN_LIFETIME_MS);
  });

  it('verifies until it expires, then not at all', () => {
    expect(verifyAgentToken(SECRET, issued.token, NOW + AGENT_TOKEN_LIFETIME_MS - 1)).toEqual({
      ok: true,
      claims: { sessionId: issued.sessionId, buyerAccountId: 42, expiresAtMs: issued.expiresAtMs },
    });
    expect(verifyAgentToken(SECRET, issued.token, NOW + AGENT_TOKEN_LIFETIME_MS)).toEqual({
      ok: false,
      rejection: 'expired',
    });
  });

  it('rejects a token whose claims or signature were changed, or that another secret signed', () => {
    const [sessionId, expires, buyer, mac] = issued.token.split('.') as [string, string, string, string];
    const tampered = [
      `${sessionId}.${Number(expires) + 3_600_000}.${buyer}.${mac}`,
      `${sessionId}.${expires}.43.${mac}`,
      `${sessionId.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}.${expires}.${buyer}.${mac}`,
      `${sessionId}.${expires}.${buyer}.${mac.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}`,
    ];
    for (const token of tampered) {
      expect(verifyAgentToken(SECRET, token, NOW)).toEqual({ ok: false, rejection: 'bad_signature' });
    }
    const otherSecret = issueAgentToken(`${SECRET}-other`, 42, NOW).token;
    expect(verifyAgentToken(SECRET, otherSecret, NOW)).toEqual({ ok: false, rejection: 'bad_signature' });
  });

  it('accepts only the canonical spelling of the signature: another last character is refused', () => {
    const base64url = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = issued.token.at(-1) ?? '';
    // The last of 43 characters carries 4 bits of the MAC and 2 spare bits: 3 other characters decode alike.
    const sameBytes = [...base64url].filter(
      (character) =>
        character !== last &&
        Buffer.from(`${issued.token.slice(-43, -1)}${character}`, 'base64url').equals(
          Buffer.from(issued.token.slice(-43), 'base64url'),
        ),
    );
    expect(sameBytes).toHaveLength(3);
    for (const character of sameBytes) {
      expect(verifyAgentToken(SECRET, `${issued.token.slice(0, -1)}${character}`, NOW)).toEqual({
        ok: false,
        rejection: 'bad_signature',
      });
    }
  });

  it('refuses a correctly signed token that expires later than the documented hour allows', () => {
    const farFuture = `${issued.sessionId}.${NOW + 365 * 24 * AGENT_TOKEN_LIFETIME_MS}.42`;
    const signed = `${farFuture}.${createHmac('sha256', SECRET).update(farFuture).digest('base64url')}`;
    expect(verifyAgentToken(SECRET, signed, NOW)).toEqual({ ok: false, rejection: 'expiry_too_far' });
    // A replica whose clock is a little behind the issuer's still accepts a fresh token.
    expect(verifyAgentToken(SECRET, issued.token, NOW - AGENT_TOKEN_CLOCK_SKEW_MS).ok).toBe(true);
    expect(verifyAgentToken(SECRET, issued.token, NOW - AGENT_TOKEN_CLOCK_SKEW_MS - 1)).toEqual({
      ok: false,
      rejection: 'expiry_too_far',
    });
    expect(() => issueAgentToken(SECRET, 42, NOW, { lifetimeMs: AGENT_TOKEN_LIFETIME_MS + 1 })).toThrow(
      RangeError,
    );
  });

  it('rejects anything that is not four well-formed parts', () => {
    for (const token of [
      '',
      'abc',
      `${issued.token}.extra`,
      issued.token.replace('.42.', '.-42.'),
      issued.token.replace('.42.', '.0.'),
      issued.token.slice(0, -1),
      ` ${issued.token}`,
    ]) {
      expect(verifyAgentToken(SECRET, token, NOW)).toEqual({ ok: false, rejection: 'malformed' });
    }
  });
});
