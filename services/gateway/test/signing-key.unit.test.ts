import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ephemeralSigningKey,
  persistentSigningKey,
  signingKeyFromPem,
  verifyWithJwk,
} from '../src/edge/signing/signing-key.js';
import { contentDigest, signatureBase, signedAnswerHeaders } from '../src/edge/signing/signed-answer.js';

const p256Pem = (): string =>
  generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();

describe('marketplace signing key', () => {
  it('publishes an ES256 public JWK without the private part, kid = RFC 7638 thumbprint', () => {
    const key = signingKeyFromPem(p256Pem());
    expect(Object.keys(key.jwk).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(key.jwk).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
    expect(key.jwk.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(key.jwk)).not.toContain('"d"');
  });

  it('signs so that the published JWK verifies, and a changed message or another key does not', () => {
    const key = ephemeralSigningKey();
    const signature = key.sign('message');
    expect(signature).toHaveLength(64);
    expect(verifyWithJwk(key.jwk, 'message', signature)).toBe(true);
    expect(verifyWithJwk(key.jwk, 'messagE', signature)).toBe(false);
    expect(verifyWithJwk(ephemeralSigningKey().jwk, 'message', signature)).toBe(false);
  });

  it('refuses a key that is not EC P-256, naming what it got', () => {
    const ed25519 = generateKeyPairSync('ed25519')
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    expect(() => signingKeyFromPem(ed25519)).toThrow(/EC P-256 .* not ed25519/);
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    expect(() => signingKeyFromPem(p384)).toThrow(/not ec secp384r1/);
  });

  it('generates the embedded default once (mode 0600) and keeps it across restarts; a rotated file changes the kid', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'signing-key-'));
    try {
      const [first, concurrent] = await Promise.all([
        persistentSigningKey(dataDir, 'signing-key.pem'),
        persistentSigningKey(dataDir, 'signing-key.pem'),
      ]);
      expect(concurrent.jwk).toEqual(first.jwk);
      const path = join(dataDir, 'secrets', 'signing-key.pem');
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await persistentSigningKey(dataDir, 'signing-key.pem')).jwk).toEqual(first.jwk);
      expect(await readFile(path, 'utf8')).toContain('BEGIN PRIVATE KEY');

      await writeFile(path, p256Pem());
      expect((await persistentSigningKey(dataDir, 'signing-key.pem')).jwk.kid).not.toBe(first.jwk.kid);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('RFC 9421 signed answers', () => {
  it('carries a Content-Digest of the body and a signature a verifier rebuilds from the headers', () => {
    const key = ephemeralSigningKey();
    const body = '{"ucp":{}}';
    const headers = signedAnswerHeaders(key, 200, body, 1_767_225_600);
    expect(headers['Content-Digest']).toBe(contentDigest(body));
    expect(headers['Signature-Input']).toBe(
      `sig1=("@status" "content-digest");created=1767225600;keyid="${key.jwk.kid}";alg="ecdsa-p256-sha256"`,
    );
    const params = headers['Signature-Input'].slice('sig1='.length);
    const signature = Buffer.from(/^sig1=:([A-Za-z0-9+/=]+):$/.exec(headers.Signature)![1]!, 'base64');
    expect(verifyWithJwk(key.jwk, signatureBase(200, contentDigest(body), params), signature)).toBe(true);
    // A replaced body or status no longer matches what was signed.
    expect(verifyWithJwk(key.jwk, signatureBase(200, contentDigest('{}'), params), signature)).toBe(false);
    expect(verifyWithJwk(key.jwk, signatureBase(404, contentDigest(body), params), signature)).toBe(false);
  });
});
