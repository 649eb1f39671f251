import { randomBytes, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { Metadata } from 'nice-grpc-common';

/**
 * Service-to-service authentication (docs/security.md, "Internal calls"): every call carries a short-lived
 * HS256 JWS naming the calling service (`iss`), the called gRPC service (`aud`) and the actor it acts for; every
 * server verifies it before any handler runs and takes the actor from it. One key per deployment, shared by the
 * services: INTERNAL_AUTH_KEY in cluster mode, random per process in the embedded runner.
 */

/** Who a call acts for, as `marketplace.common.v1.Actor`. */
export interface CallActor {
  readonly kind: string;
  readonly id: string;
}

export interface InternalCredentials {
  /** HMAC-SHA256 key; at least 32 bytes. */
  readonly key: Uint8Array;
  /** The calling service named in the tokens this process signs (`iss`). */
  readonly caller: string;
}

export interface InternalTokenClaims {
  readonly caller: string;
  /** Full name of the called gRPC service, e.g. `marketplace.listing.v1.ListingService`. */
  readonly audience: string;
  /** Absent for methods whose request names no actor. */
  readonly actor?: CallActor;
  readonly issuedAtMs: number;
}

/** What a server knows once a call's token verified. */
export interface VerifiedInternalCall {
  readonly caller: string;
  readonly actor: CallActor | undefined;
}

export const INTERNAL_AUTH_METADATA = 'authorization';
export const INTERNAL_TOKEN_TTL_S = 60;
export const MIN_INTERNAL_KEY_BYTES = 32;
const TOKEN_TYPE = 'marketplace-internal+jwt';
/** Pods' clocks differ a little: a token is still accepted a few seconds past its minute. */
const CLOCK_TOLERANCE_S = 5;
/** A signed token is reused for half its life, so the one sent always has 30 s left: more than the hop takes. */
const REUSE_FOR_MS = (INTERNAL_TOKEN_TTL_S * 1_000) / 2;
/** Bounds both caches (one entry per audience and actor); a full cache starts over. */
const MAX_CACHED_TOKENS = 10_000;

/** Thrown by `verifyInternalToken`; the server answers UNAUTHENTICATED. */
export class InternalAuthError extends Error {
  override readonly name = 'InternalAuthError';
}

/** The key imported once: jose would import raw bytes again on every signature and verification. */
const hmacKeyOf = (key: Uint8Array): Promise<webcrypto.CryptoKey> =>
  webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);

let credentials: InternalCredentials = { key: randomBytes(MIN_INTERNAL_KEY_BYTES), caller: 'marketplace' };
let hmacKey = hmacKeyOf(credentials.key);
/** Tokens this process signed, by audience and actor. */
const signedTokens = new Map<string, { token: Promise<string>; reuseUntilMs: number }>();
/**
 * Verifications by audience and token, under way or done: the same token arrives for half a minute, often many
 * calls at once, and one verification (a WebCrypto job on the thread pool) serves them all.
 */
const verifiedTokens = new Map<string, Promise<VerifiedInternalCall & { expiresAtMs: number }>>();

/**
 * Sets the key (and the caller name) every server of this process verifies and every client signs with. Cluster
 * mains call it once at start with INTERNAL_AUTH_KEY; without a call, the process uses a random key of its own,
 * which is the embedded runner's: every service is in the process, and no other process can sign.
 */
export const configureInternalAuth = (next: InternalCredentials): void => {
  if (next.key.byteLength < MIN_INTERNAL_KEY_BYTES) {
    throw new Error(`the internal auth key must have at least ${MIN_INTERNAL_KEY_BYTES} bytes`);
  }
  credentials = next;
  hmacKey = hmacKeyOf(next.key);
  signedTokens.clear();
  verifiedTokens.clear();
};

/** Signs a token as the client middleware does; tests use it to forge ones with a wrong key, time or audience. */
export const signInternalToken = (
  key: Uint8Array | webcrypto.CryptoKey,
  claims: InternalTokenClaims,
): Promise<string> => {
  const issuedAtS = Math.floor(claims.issuedAtMs / 1_000);
  return new SignJWT(claims.actor ? { actor: { kind: claims.actor.kind, id: claims.actor.id } } : {})
    .setProtectedHeader({ alg: 'HS256', typ: TOKEN_TYPE })
    .setIssuer(claims.caller)
    .setAudience(claims.audience)
    .setIssuedAt(issuedAtS)
    .setExpirationTime(issuedAtS + INTERNAL_TOKEN_TTL_S)
    .sign(key);
};

const isCallActor = (value: unknown): value is CallActor =>
  typeof value === 'object' &&
  value !== null &&
  'kind' in value &&
  'id' in value &&
  typeof value.kind === 'string' &&
  typeof value.id === 'string';

/** The service part of a method path: `/marketplace.listing.v1.ListingService/UpdateListing` → its full name. */
export const serviceOfMethodPath = (path: string): string => path.slice(1, path.lastIndexOf('/'));

/** The actor a request message names (its `actor` field), if it has one. */
export const actorOfRequest = (request: unknown): CallActor | undefined =>
  typeof request === 'object' && request !== null && 'actor' in request && isCallActor(request.actor)
    ? request.actor
    : undefined;

/** Checks signature, algorithm, type, audience, issuer and lifetime; throws InternalAuthError saying why. */
const verifyAnew = async (
  token: string,
  audience: string,
  nowMs: number,
): Promise<VerifiedInternalCall & { expiresAtMs: number }> => {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, await hmacKey, {
      algorithms: ['HS256'],
      typ: TOKEN_TYPE,
      audience,
      requiredClaims: ['iss', 'iat', 'exp'],
      clockTolerance: CLOCK_TOLERANCE_S,
      maxTokenAge: INTERNAL_TOKEN_TTL_S + CLOCK_TOLERANCE_S,
      currentDate: new Date(nowMs),
    }));
  } catch (error) {
    throw new InternalAuthError(error instanceof Error ? error.message : 'invalid token', { cause: error });
  }
  const { iss, exp, actor } = payload;
  if (actor !== undefined && !isCallActor(actor)) throw new InternalAuthError('malformed actor claim');
  // The cache answers as long as jose would: until the expiry plus the tolerance.
  return { caller: iss ?? '', actor, expiresAtMs: ((exp ?? 0) + CLOCK_TOLERANCE_S) * 1_000 };
};

/**
 * The caller and actor of a valid token for `audience`; throws InternalAuthError saying why one is not. A token
 * verified before (or being verified) is answered from the cache until it expires.
 */
export const verifyInternalToken = async (
  token: string,
  audience: string,
  nowMs = Date.now(),
): Promise<VerifiedInternalCall> => {
  const cacheKey = `${audience} ${token}`;
  let verification = verifiedTokens.get(cacheKey);
  if (verification === undefined) {
    if (verifiedTokens.size >= MAX_CACHED_TOKENS) verifiedTokens.clear();
    verification = verifyAnew(token, audience, nowMs);
    verifiedTokens.set(cacheKey, verification);
    verification.catch(() => verifiedTokens.delete(cacheKey));
  }
  const { caller, actor, expiresAtMs } = await verification;
  if (expiresAtMs <= nowMs) {
    verifiedTokens.delete(cacheKey);
    throw new InternalAuthError('token expired');
  }
  return { caller, actor };
};

/** This process's token for a call to `audience` on behalf of `actor`, signed at most every 30 s. */
const tokenFor = (audience: string, actor: CallActor | undefined, nowMs: number): Promise<string> => {
  const cacheKey = JSON.stringify(actor === undefined ? [audience] : [audience, actor.kind, actor.id]);
  const cached = signedTokens.get(cacheKey);
  if (cached !== undefined && cached.reuseUntilMs > nowMs) return cached.token;
  if (signedTokens.size >= MAX_CACHED_TOKENS) signedTokens.clear();
  const { caller } = credentials;
  const token = hmacKey.then((key) => signInternalToken(key, { caller, audience, actor, issuedAtMs: nowMs }));
  signedTokens.set(cacheKey, { token, reuseUntilMs: nowMs + REUSE_FOR_MS });
  token.catch(() => signedTokens.delete(cacheKey));
  return token;
};

/** The call's metadata plus this process's token for the method's service and the request's actor. */
export const withInternalToken = async (
  methodPath: string,
  request: unknown,
  metadata: Metadata | undefined,
): Promise<Metadata> => {
  const token = await tokenFor(serviceOfMethodPath(methodPath), actorOfRequest(request), Date.now());
  return Metadata(metadata).set(INTERNAL_AUTH_METADATA, `Bearer ${token}`);
};

/** The token a call's metadata carries, as the client middleware sends it; undefined when there is none. */
export const internalTokenOf = (metadata: Metadata): string | undefined => {
  const value = metadata.get(INTERNAL_AUTH_METADATA);
  const match = value === undefined ? null : /^Bearer ([A-Za-z0-9_.-]+)$/.exec(value);
  return match?.[1];
};
