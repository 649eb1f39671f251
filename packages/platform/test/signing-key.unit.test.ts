import { describe, expect, it } from '@jest/globals';
import { createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  algorithmOf,
  contentDigest,
  ephemeralSigningKey,
  persistentSigningKey,
  signatureBaseOf,
  signedRequestHeaders,
  signedResponseHeaders,
  signingKeyFromPem,
  verifiesRequestSignature,
  verifiesResponseSignature,
  verifyWithJwk,
} from '../src/signing-key.js';
import type { PublishedJwk } from '../src/signing-key.js';

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

describe('RFC 9421 signed requests (UCP webhooks)', () => {
  it('signs method, authority, path, query, ucp-agent, digest and type; a verifier rebuilds the base by the RFC', () => {
    const key = ephemeralSigningKey();
    const body = '{"type":"saved_search.match"}';
    const agent = 'profile="https://market.test/.well-known/ucp"';
    const headers = signedRequestHeaders(
      key,
      {
        method: 'post',
        url: 'https://Hooks.Example:8443/in/market?src=1',
        headers: { 'content-type': 'application/json', 'ucp-agent': agent, 'x-other': 'not signed' },
        body,
      },
      1_767_225_600,
    );
    expect(headers['Content-Digest']).toBe(contentDigest(body));
    const params = `("@method" "@authority" "@path" "@query" "ucp-agent" "content-digest" "content-type");created=1767225600;keyid="${key.jwk.kid}"`;
    expect(headers['Signature-Input']).toBe(`sig1=${params}`);
    // RFC 9421 §2.5, written out here rather than rebuilt with the code under test.
    const base = [
      '"@method": POST',
      '"@authority": hooks.example:8443',
      '"@path": /in/market',
      '"@query": ?src=1',
      `"ucp-agent": ${agent}`,
      `"content-digest": ${contentDigest(body)}`,
      '"content-type": application/json',
      `"@signature-params": ${params}`,
    ].join('\n');
    const signature = Buffer.from(/^sig1=:([A-Za-z0-9+/=]+):$/.exec(headers.Signature)![1]!, 'base64');
    expect(signature).toHaveLength(64);
    expect(verifyWithJwk(key.jwk, base, signature)).toBe(true);
    expect(verifyWithJwk(key.jwk, base.replace('/in/market', '/in/other'), signature)).toBe(false);
  });

  it('verifies a signed request as its receiver saw it, and refuses a changed byte, path, header or key', () => {
    const key = ephemeralSigningKey();
    const body = '{"type":"saved_search.match","price":3500}';
    const headers = {
      'content-type': 'application/json',
      'ucp-agent': 'profile="https://market.test/.well-known/ucp"',
    };
    const signed = signedRequestHeaders(
      key,
      { method: 'POST', url: 'https://hooks.example:8443/in?src=1', headers, body },
      1_767_225_600,
    );
    const received = {
      method: 'POST',
      path: '/in?src=1',
      headers: {
        ...headers,
        host: 'hooks.example:8443',
        'content-digest': signed['Content-Digest'],
        'signature-input': signed['Signature-Input'],
        signature: signed.Signature,
      },
      body,
    };
    expect(verifiesRequestSignature(received, key.jwk)).toBe(true);
    expect(verifiesRequestSignature({ ...received, body: body.replace('3500', '3400') }, key.jwk)).toBe(
      false,
    );
    expect(verifiesRequestSignature({ ...received, path: '/in?src=2' }, key.jwk)).toBe(false);
    expect(
      verifiesRequestSignature(
        { ...received, headers: { ...received.headers, 'content-type': 'text/plain' } },
        key.jwk,
      ),
    ).toBe(false);
    expect(verifiesRequestSignature(received, ephemeralSigningKey().jwk)).toBe(false);
    expect(verifiesRequestSignature({ ...received, headers: { host: 'hooks.example:8443' } }, key.jwk)).toBe(
      false,
    );
  });

  it('leaves out the query and ucp-agent when the request has none', () => {
    const key = ephemeralSigningKey();
    const headers = signedRequestHeaders(
      key,
      {
        method: 'POST',
        url: 'https://hooks.example/in',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      },
      1,
    );
    expect(headers['Signature-Input']).toBe(
      `sig1=("@method" "@authority" "@path" "content-digest" "content-type");created=1;keyid="${key.jwk.kid}"`,
    );
  });
});

describe('RFC 9421 signed answers and the algorithm a verifier uses (UCP signatures)', () => {
  it('signs an answer over @status, content-digest and content-type, naming no alg', () => {
    const key = ephemeralSigningKey();
    const body = '{"ucp":{}}';
    const headers = signedResponseHeaders(
      key,
      { status: 200, contentType: 'application/json', body },
      1_767_225_600,
    );
    expect(headers['Content-Digest']).toBe(contentDigest(body));
    const params = `("@status" "content-digest" "content-type");created=1767225600;keyid="${key.jwk.kid}"`;
    expect(headers['Signature-Input']).toBe(`sig1=${params}`);
    const base = [
      '"@status": 200',
      `"content-digest": ${contentDigest(body)}`,
      '"content-type": application/json',
      `"@signature-params": ${params}`,
    ].join('\n');
    const signature = Buffer.from(/^sig1=:([A-Za-z0-9+/=]+):$/.exec(headers.Signature)![1]!, 'base64');
    expect(verifyWithJwk(key.jwk, base, signature)).toBe(true);
    const received = {
      status: 200,
      headers: {
        'content-type': 'application/json',
        'content-digest': headers['Content-Digest'],
        'signature-input': headers['Signature-Input'],
        signature: headers.Signature,
      },
      body,
    };
    expect(verifiesResponseSignature(received, key.jwk)).toBe(true);
    expect(verifiesResponseSignature({ ...received, status: 201 }, key.jwk)).toBe(false);
    expect(verifiesResponseSignature({ ...received, body: '{"ucp":[]}' }, key.jwk)).toBe(false);
    expect(
      verifiesResponseSignature(
        { ...received, headers: { ...received.headers, 'content-type': 'text/html' } },
        key.jwk,
      ),
    ).toBe(false);
  });

  it('takes the algorithm from the JWK: alg when listed, else kty and crv; a contradicting alg is unusable', () => {
    const jwk = ephemeralSigningKey().jwk;
    expect(algorithmOf(jwk)).toBe('ES256');
    const { alg: _alg, ...withoutAlg } = jwk;
    expect(algorithmOf(withoutAlg)).toBe('ES256');
    expect(algorithmOf({ ...jwk, alg: 'ES384' })).toBeUndefined();
    expect(algorithmOf({ ...jwk, alg: 'RS256' })).toBeUndefined();
    expect(algorithmOf({ kid: 'k', kty: 'OKP', crv: 'Ed25519', x: 'AA' })).toBe('EdDSA');
    expect(algorithmOf({ kid: 'k', kty: 'RSA' })).toBeUndefined();
  });

  it('verifies with the JWK’s algorithm: an ES384 key’s SHA-384 signature, not a SHA-256 one', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    const exported = createPublicKey(privateKey).export({ format: 'jwk' });
    const jwk: PublishedJwk = {
      kid: 'p384',
      kty: 'EC',
      crv: 'P-384',
      x: exported.x!,
      y: exported.y!,
      alg: 'ES384',
    };
    const data = 'signed bytes';
    const signed = (hash: string) =>
      sign(hash, Buffer.from(data), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    expect(verifyWithJwk(jwk, data, signed('sha384'))).toBe(true);
    expect(verifyWithJwk(jwk, data, signed('sha256'))).toBe(false);
    // Listed as ES256, the P-384 key verifies nothing: its alg contradicts its curve.
    expect(verifyWithJwk({ ...jwk, alg: 'ES256' }, data, signed('sha384'))).toBe(false);
  });

  it('refuses a Signature-Input whose alg names another algorithm than the key, accepts the same one', () => {
    const key = ephemeralSigningKey();
    const body = '{}';
    const digest = contentDigest(body);
    const received = (alg: string) => {
      const params = `("@status" "content-digest" "content-type");keyid="${key.jwk.kid}";alg="${alg}";created=1`;
      const base = signatureBaseOf(
        [
          ['@status', '200'],
          ['content-digest', digest],
          ['content-type', 'application/json'],
        ],
        params,
      );
      return {
        status: 200,
        headers: {
          'content-type': 'application/json',
          'content-digest': digest,
          'signature-input': `sig1=${params}`,
          signature: `sig1=:${key.sign(base).toString('base64')}:`,
        },
        body,
      };
    };
    expect(verifiesResponseSignature(received('ecdsa-p256-sha256'), key.jwk)).toBe(true);
    expect(verifiesResponseSignature(received('ecdsa-p384-sha384'), key.jwk)).toBe(false);
    expect(verifiesResponseSignature(received('ES256'), key.jwk)).toBe(false);
  });

  it('refuses a signature that leaves the body or the sent UCP-Agent uncovered', () => {
    const key = ephemeralSigningKey();
    const body = '{"a":1}';
    const receivedWith = (headers: Record<string, string>) => {
      const signed = signedRequestHeaders(
        key,
        { method: 'POST', url: 'https://hooks.example/in', headers, body },
        1,
      );
      return {
        method: 'POST',
        path: '/in',
        headers: {
          ...headers,
          host: 'hooks.example',
          'content-digest': signed['Content-Digest'],
          'signature-input': signed['Signature-Input'],
          signature: signed.Signature,
        },
        body,
      };
    };
    const typed = receivedWith({ 'content-type': 'application/json' });
    expect(verifiesRequestSignature(typed, key.jwk)).toBe(true);
    // A UCP-Agent the signature does not cover could have been added on the way.
    expect(
      verifiesRequestSignature(
        { ...typed, headers: { ...typed.headers, 'ucp-agent': 'profile="x"' } },
        key.jwk,
      ),
    ).toBe(false);
    // Signed without its content-type, the body is not bound by its type.
    const untyped = receivedWith({});
    expect(
      verifiesRequestSignature(
        { ...untyped, headers: { ...untyped.headers, 'content-type': 'application/json' } },
        key.jwk,
      ),
    ).toBe(false);
  });
});
