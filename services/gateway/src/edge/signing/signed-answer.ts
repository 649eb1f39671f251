import { SIGNATURE_LABEL, contentDigest, signatureBaseOf } from '@marketplace/platform';
import type { SigningKey } from '@marketplace/platform';

/**
 * RFC 9421 response signature over `@status` and `content-digest` (UCP signatures, as docs/agents.md
 * "Signing key" describes): the headers to add to an answer whose body is `body`.
 */
export const signedAnswerHeaders = (
  key: SigningKey,
  status: number,
  body: string | Buffer,
  createdSeconds: number,
): { 'Content-Digest': string; 'Signature-Input': string; Signature: string } => {
  const digest = contentDigest(body);
  const params = `("@status" "content-digest");created=${createdSeconds};keyid="${key.jwk.kid}";alg="ecdsa-p256-sha256"`;
  const base = signatureBase(status, digest, params);
  return {
    'Content-Digest': digest,
    'Signature-Input': `${SIGNATURE_LABEL}=${params}`,
    Signature: `${SIGNATURE_LABEL}=:${key.sign(base).toString('base64')}:`,
  };
};

/** The RFC 9421 §2.5 signature base for the two covered components, one per line, params last. */
export const signatureBase = (status: number, digest: string, params: string): string =>
  signatureBaseOf(
    [
      ['@status', String(status)],
      ['content-digest', digest],
    ],
    params,
  );
