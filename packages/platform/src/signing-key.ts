import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign,
  verify,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// The marketplace signing key (docs/agents.md, "Signing key"): one ES256 key whose public JWK /.well-known/ucp
// publishes, shared by the gateway (its signed answers) and the subscription service (its webhook deliveries).

/** The public half of the marketplace signing key as a UCP profile lists it (docs/agents.md, "Signing key"). */
export interface SigningJwk {
  readonly kid: string;
  readonly kty: 'EC';
  readonly crv: 'P-256';
  readonly x: string;
  readonly y: string;
  readonly use: 'sig';
  readonly alg: 'ES256';
}

/** An ES256 (ECDSA P-256, SHA-256) key pair: UCP verifiers require ES256 (docs/agents.md, "Signing key"). */
export interface SigningKey {
  readonly jwk: SigningJwk;
  /** Raw r‖s signature (IEEE P1363), the form RFC 9421 `ecdsa-p256-sha256` and JWS ES256 use. */
  sign(data: string | Buffer): Buffer;
}

/** RFC 7638 thumbprint: the kid changes exactly when the key does, so a rotated key never reuses one. */
const thumbprint = (x: string, y: string): string =>
  createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y }))
    .digest('base64url');

/** Reads a PKCS#8 PEM private key; anything but a P-256 EC key is refused, naming what was found. */
export const signingKeyFromPem = (pem: string): SigningKey => {
  const privateKey: KeyObject = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new Error(
      `the signing key must be an EC P-256 private key, not ${privateKey.asymmetricKeyType ?? 'unknown'} ${privateKey.asymmetricKeyDetails?.namedCurve ?? ''}`.trim(),
    );
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const x = publicJwk.x!;
  const y = publicJwk.y!;
  return {
    jwk: { kid: thumbprint(x, y), kty: 'EC', crv: 'P-256', x, y, use: 'sig', alg: 'ES256' },
    sign: (data) => sign('sha256', Buffer.from(data), { key: privateKey, dsaEncoding: 'ieee-p1363' }),
  };
};

/** Checks an ES256 signature against a published JWK: what a receiver of our signed messages does. */
export const verifyWithJwk = (jwk: SigningJwk, data: string | Buffer, signature: Buffer): boolean =>
  verify(
    'sha256',
    Buffer.from(data),
    { key: createPublicKey({ key: { ...jwk }, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    signature,
  );

/**
 * The embedded-mode default: a key generated once and kept in `<dataDir>/secrets/<name>` (mode 0600) like the
 * other embedded secrets (docs/specification.md, "Running it"), so the published JWK survives restarts.
 * Written whole to a private file and then hard-linked into place (atomic, fails if present), so two processes
 * starting together on one DATA_DIR end up with the same key and neither reads a half-written one.
 */
export const persistentSigningKey = async (dataDir: string, name: string): Promise<SigningKey> => {
  const directory = join(dataDir, 'secrets');
  const path = join(directory, name);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const candidate = `${path}.${randomUUID()}.tmp`;
  await writeFile(candidate, privateKey.export({ format: 'pem', type: 'pkcs8' }), {
    flag: 'wx',
    mode: 0o600,
  });
  try {
    await link(candidate, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(candidate);
  }
  return signingKeyFromPem(await readFile(path, 'utf8'));
};

/** A key for tests and for a gateway started without one: valid for this process only. */
export const ephemeralSigningKey = (): SigningKey =>
  signingKeyFromPem(
    generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString(),
  );

/** RFC 9530 Content-Digest of the exact bytes sent. */
export const contentDigest = (body: string | Buffer): string =>
  `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;

/** The RFC 9421 signature label we use; receivers pick it out of Signature-Input by this name. */
export const SIGNATURE_LABEL = 'sig1';

/** An outgoing request to sign: its method, absolute URL, the headers it will carry and its body. */
export interface RequestToSign {
  readonly method: string;
  readonly url: string;
  /** Lower-case names; the ones signed must be present (content-type, and ucp-agent when sent). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The RFC 9421 request signature UCP asks of a business's webhooks (docs/protocols.md §2.2; UCP signatures):
 * `@method`, `@authority`, `@path`, `@query` when there is one, `ucp-agent` when sent, `content-digest` and
 * `content-type`, with `created` and `keyid` (no `alg`: a UCP verifier takes it from the JWK). The headers to add.
 */
export const signedRequestHeaders = (
  key: SigningKey,
  request: RequestToSign,
  createdSeconds: number,
): { 'Content-Digest': string; 'Signature-Input': string; Signature: string } => {
  const url = new URL(request.url);
  const digest = contentDigest(request.body);
  const headers: Readonly<Record<string, string>> = { ...request.headers, 'content-digest': digest };
  const components: [string, string][] = [
    ['@method', request.method.toUpperCase()],
    ['@authority', url.host.toLowerCase()],
    ['@path', url.pathname],
    ...(url.search === '' ? [] : ([['@query', url.search]] as [string, string][])),
    ...['ucp-agent', 'content-digest', 'content-type'].flatMap((name): [string, string][] => {
      const value = headers[name];
      return value === undefined ? [] : [[name, value]];
    }),
  ];
  const params = `(${components.map(([name]) => `"${name}"`).join(' ')});created=${createdSeconds};keyid="${key.jwk.kid}"`;
  return {
    'Content-Digest': digest,
    'Signature-Input': `${SIGNATURE_LABEL}=${params}`,
    Signature: `${SIGNATURE_LABEL}=:${key.sign(signatureBaseOf(components, params)).toString('base64')}:`,
  };
};

/** A request as its receiver saw it: method, path with query, lower-case headers and the exact body bytes. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string | Buffer;
}

/**
 * A receiver's check of a `signedRequestHeaders` signature from what arrived only: the Content-Digest of the
 * body, and the components Signature-Input names rebuilt from the request and verified with the published JWK
 * (docs/agents.md, "Signing key"). False for anything missing, another key or a changed byte.
 */
export const verifiesRequestSignature = (request: ReceivedRequest, jwk: SigningJwk): boolean => {
  const input = new RegExp(`^${SIGNATURE_LABEL}=(\\(([^)]*)\\);created=\\d+;keyid="([^"]+)")$`).exec(
    String(request.headers['signature-input']),
  );
  const signature = new RegExp(`^${SIGNATURE_LABEL}=:([A-Za-z0-9+/=]+):$`).exec(
    String(request.headers['signature']),
  );
  if (!input || !signature || input[3] !== jwk.kid) return false;
  if (request.headers['content-digest'] !== contentDigest(request.body)) return false;
  const url = new URL(request.path, 'http://receiver.invalid');
  const derived: Readonly<Record<string, string>> = {
    '@method': request.method.toUpperCase(),
    '@authority': String(request.headers['host']).toLowerCase(),
    '@path': url.pathname,
    '@query': url.search,
  };
  const components = (input[2] ?? '').split(' ').map((quoted): [string, string] => {
    const name = quoted.slice(1, -1);
    return [name, derived[name] ?? String(request.headers[name])];
  });
  return verifyWithJwk(
    jwk,
    signatureBaseOf(components, input[1] ?? ''),
    Buffer.from(signature[1] ?? '', 'base64'),
  );
};

/** RFC 9421 §2.5: one `"<component>": <value>` line per covered component, then `"@signature-params"`. */
export const signatureBaseOf = (components: readonly (readonly [string, string])[], params: string): string =>
  [...components.map(([name, value]) => `"${name}": ${value}`), `"@signature-params": ${params}`].join('\n');
