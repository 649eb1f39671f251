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

/**
 * A signing key as a profile publishes it and a verifier reads it: UCP keeps the kty/crv/alg vocabularies open
 * (docs/protocols.md §2.1), so a verifier meets keys it cannot use and skips them.
 */
export interface PublishedJwk {
  readonly kid: string;
  readonly kty: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
  readonly use?: string;
  readonly alg?: string;
}

/**
 * The JWA algorithms of UCP signatures (ES256 the baseline every verifier checks), each with its key shape, its
 * hash (none for EdDSA) and its RFC 9421 registry name.
 */
const ALGORITHMS = {
  ES256: { kty: 'EC', crv: 'P-256', hash: 'sha256', rfc9421: 'ecdsa-p256-sha256' },
  ES384: { kty: 'EC', crv: 'P-384', hash: 'sha384', rfc9421: 'ecdsa-p384-sha384' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', hash: null, rfc9421: 'ed25519' },
} as const;
export type SignatureAlgorithm = keyof typeof ALGORITHMS;

/**
 * The algorithm a signature by this key uses: derived from the JWK, as UCP requires (Signature-Input names
 * none; docs/agents.md, "Signing key"). `alg`, when listed, must agree with kty/crv; undefined: unusable.
 */
export const algorithmOf = (jwk: PublishedJwk): SignatureAlgorithm | undefined => {
  const names = Object.keys(ALGORITHMS) as SignatureAlgorithm[];
  const byShape = names.find((name) => ALGORITHMS[name].kty === jwk.kty && ALGORITHMS[name].crv === jwk.crv);
  return jwk.alg === undefined || jwk.alg === byShape ? byShape : undefined;
};

/**
 * Checks a signature against a published JWK with the algorithm that JWK names (raw r‖s for ECDSA): what a
 * receiver of our signed messages does. False for a key of an algorithm it does not know.
 */
export const verifyWithJwk = (jwk: PublishedJwk, data: string | Buffer, signature: Buffer): boolean => {
  const algorithm = algorithmOf(jwk);
  if (algorithm === undefined) return false;
  try {
    return verify(
      ALGORITHMS[algorithm].hash,
      Buffer.from(data),
      { key: createPublicKey({ key: { ...jwk }, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
      signature,
    );
  } catch {
    // A malformed key (a wrong-length coordinate) verifies nothing.
    return false;
  }
};

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

/** The headers a signature adds: the body's Content-Digest, Signature-Input and Signature. */
export interface SignatureHeaders {
  readonly 'Content-Digest': string;
  readonly 'Signature-Input': string;
  readonly Signature: string;
}

/**
 * Signs the covered components with `created` and `keyid` and no `alg`: a UCP verifier takes the algorithm from
 * the JWK the profile lists under that kid (docs/agents.md, "Signing key"), so requests and answers agree.
 */
const signatureHeadersOf = (
  key: SigningKey,
  components: readonly (readonly [string, string])[],
  digest: string,
  createdSeconds: number,
): SignatureHeaders => {
  const params = `(${components.map(([name]) => `"${name}"`).join(' ')});created=${createdSeconds};keyid="${key.jwk.kid}"`;
  return {
    'Content-Digest': digest,
    'Signature-Input': `${SIGNATURE_LABEL}=${params}`,
    Signature: `${SIGNATURE_LABEL}=:${key.sign(signatureBaseOf(components, params)).toString('base64')}:`,
  };
};

/**
 * The RFC 9421 request signature UCP asks of a business's webhooks (docs/protocols.md §2.2; UCP signatures):
 * `@method`, `@authority`, `@path`, `@query` when there is one, `ucp-agent` when sent, `content-digest` and
 * `content-type`, with `created` and `keyid`. The headers to add.
 */
export const signedRequestHeaders = (
  key: SigningKey,
  request: RequestToSign,
  createdSeconds: number,
): SignatureHeaders => {
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
  return signatureHeadersOf(key, components, digest, createdSeconds);
};

/**
 * The RFC 9421 response signature of UCP signatures: `@status`, `content-digest` and `content-type` (both
 * required of an answer with a body), as docs/agents.md ("Signing key") lists for /.well-known/ucp.
 */
export const signedResponseHeaders = (
  key: SigningKey,
  response: { readonly status: number; readonly contentType: string; readonly body: string | Buffer },
  createdSeconds: number,
): SignatureHeaders => {
  const digest = contentDigest(response.body);
  return signatureHeadersOf(
    key,
    [
      ['@status', String(response.status)],
      ['content-digest', digest],
      ['content-type', response.contentType],
    ],
    digest,
    createdSeconds,
  );
};

type ReceivedHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** A request as its receiver saw it: method, path with query, lower-case headers and the exact body bytes. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: ReceivedHeaders;
  readonly body: string | Buffer;
}

/** An answer as its client saw it: status, lower-case headers and the exact body bytes. */
export interface ReceivedResponse {
  readonly status: number;
  readonly headers: ReceivedHeaders;
  readonly body: string | Buffer;
}

const headerOf = (headers: ReceivedHeaders, name: string): string | undefined => {
  const value = headers[name];
  return value === undefined ? undefined : String(value);
};

/**
 * The verifier's side of UCP signatures (docs/agents.md, "Signing key"): Signature-Input's components and
 * parameters (any order, RFC 9421 §2.3), the key of its `keyid`, the algorithm that key's JWK names (an `alg`
 * parameter, which UCP signers leave out, must name the same one, RFC 9421 §3.2), every `required` component
 * covered, the Content-Digest of the body, and the signature over the rebuilt base.
 */
const verifiesSignature = (
  headers: ReceivedHeaders,
  body: string | Buffer,
  derived: Readonly<Record<string, string>>,
  required: readonly string[],
  jwk: PublishedJwk,
): boolean => {
  const input = new RegExp(`^${SIGNATURE_LABEL}=(\\(([^)]*)\\)((?:;[a-z]+=(?:"[^"]*"|\\d+))*))$`).exec(
    headerOf(headers, 'signature-input') ?? '',
  );
  const signature = new RegExp(`^${SIGNATURE_LABEL}=:([A-Za-z0-9+/=]+):$`).exec(
    headerOf(headers, 'signature') ?? '',
  );
  if (!input || !signature) return false;
  const params = new Map(
    [...(input[3] ?? '').matchAll(/;([a-z]+)=("([^"]*)"|\d+)/g)].map((match) => [
      match[1]!,
      match[3] ?? match[2]!,
    ]),
  );
  const algorithm = algorithmOf(jwk);
  if (algorithm === undefined || params.get('keyid') !== jwk.kid) return false;
  const alg = params.get('alg');
  if (alg !== undefined && alg !== ALGORITHMS[algorithm].rfc9421) return false;
  const names = (input[2] ?? '')
    .split(' ')
    .filter((quoted) => quoted !== '')
    .map((quoted) => quoted.slice(1, -1));
  if (required.some((name) => !names.includes(name))) return false;
  if (names.includes('content-digest') && headerOf(headers, 'content-digest') !== contentDigest(body))
    return false;
  const components: [string, string][] = [];
  for (const name of names) {
    const value = name.startsWith('@') ? derived[name] : headerOf(headers, name);
    if (value === undefined) return false;
    components.push([name, value]);
  }
  return verifyWithJwk(
    jwk,
    signatureBaseOf(components, input[1] ?? ''),
    Buffer.from(signature[1] ?? '', 'base64'),
  );
};

/** UCP's coverage rule: the body, when there is one, is bound by its digest and its type. */
const bodyComponents = (body: string | Buffer): string[] =>
  body.length === 0 ? [] : ['content-digest', 'content-type'];

/**
 * A receiver's check of a `signedRequestHeaders` signature from what arrived only, with the published JWK
 * (docs/agents.md, "Signing key"): the target, the body, and `ucp-agent` and `idempotency-key` when sent must
 * be covered. False for anything missing, another key or algorithm, or a changed byte.
 */
export const verifiesRequestSignature = (request: ReceivedRequest, jwk: PublishedJwk): boolean => {
  const url = new URL(request.path, 'http://receiver.invalid');
  return verifiesSignature(
    request.headers,
    request.body,
    {
      '@method': request.method.toUpperCase(),
      '@authority': String(request.headers['host']).toLowerCase(),
      '@path': url.pathname,
      '@query': url.search,
    },
    [
      '@method',
      '@authority',
      '@path',
      ...(url.search === '' ? [] : ['@query']),
      ...bodyComponents(request.body),
      ...['ucp-agent', 'idempotency-key'].filter((name) => request.headers[name] !== undefined),
    ],
    jwk,
  );
};

/** A client's check of a `signedResponseHeaders` signature: `@status`, and the body by digest and type. */
export const verifiesResponseSignature = (response: ReceivedResponse, jwk: PublishedJwk): boolean =>
  verifiesSignature(
    response.headers,
    response.body,
    { '@status': String(response.status) },
    ['@status', ...bodyComponents(response.body)],
    jwk,
  );

/** RFC 9421 §2.5: one `"<component>": <value>` line per covered component, then `"@signature-params"`. */
export const signatureBaseOf = (components: readonly (readonly [string, string])[], params: string): string =>
  [...components.map(([name, value]) => `"${name}": ${value}`), `"@signature-params": ${params}`].join('\n');
