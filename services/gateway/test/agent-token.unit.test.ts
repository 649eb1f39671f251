import { describe, expect, it } from '@jest/globals';
import { AGENT_TOKEN_LIFETIME_MS, issueAgentToken, verifyAgentToken } from '../src/domain/agent-token.js';

const SECRET = 'agent-token-secret-of-at-least-32-chars';
const NOW = Date.UTC(2026, 0, 1, 12);
const fixedRandom = (bytes: number): Buffer => Buffer.alloc(bytes, 7);

describe('agent tokens', () => {
  const issued = issueAgentToken(SECRET, 42, NOW, { random: fixedRandom });

  it('has the four parts of spec 5, expiring after an hour', () => {
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
