import { createHash } from 'node:crypto';
import type { SigningKey } from './signing-key.js';

/** The RFC 9421 signature label we use; receivers pick it out of Signature-Input by this name. */
export const SIGNATURE_LABEL = 'sig1';

/** RFC 9530 Content-Digest of the exact bytes sent. */
export const contentDigest = (body: string | Buffer): string =>
  `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;

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
  `"@status": ${status}\n"content-digest": ${digest}\n"@signature-params": ${params}`;
