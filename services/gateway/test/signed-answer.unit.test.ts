import { describe, expect, it } from '@jest/globals';
import { contentDigest, ephemeralSigningKey, verifyWithJwk } from '@marketplace/platform';
import { signatureBase, signedAnswerHeaders } from '../src/edge/signing/signed-answer.js';

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
