import { describe, expect, it } from '@jest/globals';
import type { Request, Response } from 'express';
import { originGuard } from '../src/edge/mcp/origin-guard.js';

/** What the guard decides for these request headers: 'next', or the refusal's message. */
const decide = (headers: Record<string, string>, behindProxy: boolean): string => {
  let outcome = 'no answer';
  const guard = originGuard(
    'https://market.test',
    (_res, message) => {
      outcome = message;
    },
    { behindProxy },
  );
  const req = { get: (name: string) => headers[name.toLowerCase()] } as unknown as Request;
  void guard(req, {} as Response, () => {
    outcome = 'next';
  });
  return outcome;
};

describe('the MCP Origin/Host guard', () => {
  it('ignores X-Forwarded-Host when no proxy is declared: a client cannot claim a loopback host', () => {
    expect(decide({ host: 'evil.test', 'x-forwarded-host': 'localhost' }, false)).toMatch(/unknown Host/);
    expect(decide({ host: 'evil.test', 'x-forwarded-host': 'market.test' }, false)).toMatch(/unknown Host/);
    expect(decide({ host: 'market.test', 'x-forwarded-host': 'evil.test' }, false)).toBe('next');
  });

  it("behind a declared proxy, judges the proxy's X-Forwarded-Host instead of Host", () => {
    expect(decide({ host: 'gateway-internal:8080', 'x-forwarded-host': 'market.test' }, true)).toBe('next');
    expect(decide({ host: 'market.test', 'x-forwarded-host': 'evil.test, market.test' }, true)).toMatch(
      /unknown Host/,
    );
    expect(decide({ host: 'market.test' }, true)).toBe('next');
  });

  it('refuses a foreign Origin whatever the Host', () => {
    expect(decide({ host: 'market.test', origin: 'https://evil.test' }, false)).toMatch(/origin/);
    expect(decide({ host: 'localhost', origin: 'http://localhost:3000' }, false)).toBe('next');
  });
});
