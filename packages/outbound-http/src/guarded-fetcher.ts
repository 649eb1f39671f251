import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { Agent, request } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { createAddressPolicy } from './address-policy.js';
import { OutboundFetchError } from './outbound-fetch.error.js';

export const OUTBOUND_LIMITS = {
  timeoutMs: 10_000,
  maxBytes: 10 * 1024 * 1024,
  maxRedirects: 3,
} as const;

export interface GuardedFetcherOptions {
  /** Hosts and CIDRs the operator allows even though they are not public (OUTBOUND_ALLOW_HOSTS). */
  readonly allowList?: { readonly hosts?: readonly string[]; readonly cidrs?: readonly string[] };
  /** Bound on the whole fetch: every redirect and the body; default 10 s. */
  readonly timeoutMs?: number;
  /** Largest body accepted; default 10 MiB. */
  readonly maxBytes?: number;
  /** Redirects followed; default 3. */
  readonly maxRedirects?: number;
  /** Name resolution; default the system resolver (`dns.lookup`). Tests replace it to play DNS rebinding. */
  readonly resolve?: (hostname: string) => Promise<LookupAddress[]>;
}

export interface FetchedResource {
  /** The URL that answered, after redirects. */
  readonly url: string;
  /** The Content-Type header without parameters, lower case; undefined when absent. */
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

/** What a guarded POST learned: the status of the answer (its body is read and dropped). */
export interface PostedResponse {
  readonly status: number;
}

export interface GuardedFetcher {
  /** The bound on one whole exchange (every redirect and the body). */
  readonly timeoutMs: number;
  /**
   * GETs a URL under the guard; rejects with OutboundFetchError. `signal` lets the caller give up earlier than
   * the timeout (a call whose time for images ran out): the fetch then rejects as `cancelled`.
   */
  fetch(
    url: string,
    options?: { readonly accept?: string; readonly signal?: AbortSignal },
  ): Promise<FetchedResource>;
  /**
   * POSTs a body under the same guard and timeout (webhooks). Redirects are not followed: a 3xx is an answer
   * like any other. Rejects with OutboundFetchError only when no answer arrived (refused address, timeout,
   * network); any HTTP status resolves.
   */
  post(
    url: string,
    request: { readonly headers: Readonly<Record<string, string>>; readonly body: string },
  ): Promise<PostedResponse>;
  close(): Promise<void>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

const contentTypeOf = (header: string | string[] | undefined): string | undefined => {
  const value = Array.isArray(header) ? header[0] : header;
  const type = value?.split(';')[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
};

/** The guard's own refusal, wherever undici wrapped it (a lookup error surfaces as the connect error's cause). */
const guardErrorIn = (error: unknown): OutboundFetchError | undefined => {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof OutboundFetchError) return current;
  }
  return undefined;
};

/**
 * Outbound HTTP for URLs that users supply (listing images, later webhooks). The connection's address is
 * chosen by a lookup hook that resolves once, drops every address the policy refuses and hands the survivors
 * to the socket: what was checked is what is connected to, so DNS rebinding cannot swap the address between
 * check and connect. Literal IP hosts never reach the lookup and are checked before the request. Redirects are
 * followed by hand, each hop checked again.
 */
export const createGuardedFetcher = (options: GuardedFetcherOptions = {}): GuardedFetcher => {
  const policy: AddressPolicy = createAddressPolicy(options.allowList);
  const timeoutMs = options.timeoutMs ?? OUTBOUND_LIMITS.timeoutMs;
  const maxBytes = options.maxBytes ?? OUTBOUND_LIMITS.maxBytes;
  const maxRedirects = options.maxRedirects ?? OUTBOUND_LIMITS.maxRedirects;
  const resolve = options.resolve ?? ((hostname: string) => dnsLookup(hostname, { all: true }));

  const guardedLookup = (
    hostname: string,
    lookupOptions: { all?: boolean },
    callback: LookupCallback,
  ): void => {
    resolve(hostname).then(
      (addresses) => {
        const permitted = policy.allowsHost(hostname)
          ? addresses
          : addresses.filter(({ address }) => policy.allowsAddress(address));
        const [first] = permitted;
        if (!first) {
          callback(
            new OutboundFetchError('forbidden_address', `${hostname} resolves to no public address`),
            [],
          );
        } else if (lookupOptions.all) {
          callback(null, permitted);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), []),
    );
  };

  const agent = new Agent({ connect: { lookup: guardedLookup } });

  const checkTarget = (url: URL): void => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundFetchError('bad_url', `only http and https URLs can be fetched, not ${url.protocol}`);
    }
    if (policy.refusesLiteralHost(url.hostname)) {
      throw new OutboundFetchError('forbidden_address', `${url.hostname} is not a public address`);
    }
  };

  const readBody = async (
    body: AsyncIterable<Buffer> & { destroy(): unknown },
    declared: number,
  ): Promise<Buffer> => {
    if (declared > maxBytes) {
      body.destroy();
      throw new OutboundFetchError('too_large', `the response is larger than ${maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        throw new OutboundFetchError('too_large', `the response is larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size);
  };

  const fetchOnce = async (
    start: string,
    accept: string | undefined,
    signal: AbortSignal,
  ): Promise<FetchedResource> => {
    let url: URL;
    try {
      url = new URL(start);
    } catch {
      throw new OutboundFetchError('bad_url', 'not an absolute URL');
    }
    for (let redirects = 0; ; redirects++) {
      checkTarget(url);
      const response = await request(url, {
        method: 'GET',
        dispatcher: agent,
        signal,
        headers: accept === undefined ? {} : { accept },
      });
      const location = response.headers['location'];
      if (REDIRECT_STATUSES.has(response.statusCode) && typeof location === 'string') {
        await response.body.dump();
        if (redirects >= maxRedirects) {
          throw new OutboundFetchError('too_many_redirects', `more than ${maxRedirects} redirects`);
        }
        url = new URL(location, url);
        continue;
      }
      if (response.statusCode < 200 || response.statusCode > 299) {
        await response.body.dump();
        throw new OutboundFetchError('http_status', `the server answered ${response.statusCode}`);
      }
      const declared = Number(response.headers['content-length'] ?? 0);
      const body = await readBody(response.body, Number.isFinite(declared) ? declared : 0);
      return { url: url.href, contentType: contentTypeOf(response.headers['content-type']), body };
    }
  };

  const postOnce = async (
    target: string,
    { headers, body }: { readonly headers: Readonly<Record<string, string>>; readonly body: string },
    signal: AbortSignal,
  ): Promise<PostedResponse> => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new OutboundFetchError('bad_url', 'not an absolute URL');
    }
    checkTarget(url);
    const response = await request(url, { method: 'POST', dispatcher: agent, signal, headers, body });
    await response.body.dump();
    return { status: response.statusCode };
  };

  /** Runs one bounded exchange, turning whatever went wrong into an OutboundFetchError. */
  const guarded = async <T>(
    exchange: (signal: AbortSignal) => Promise<T>,
    callerSignal?: AbortSignal,
  ): Promise<T> => {
    if (callerSignal?.aborted)
      throw new OutboundFetchError('cancelled', 'the caller gave up before the fetch');
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = callerSignal === undefined ? timeout : AbortSignal.any([timeout, callerSignal]);
    try {
      return await exchange(signal);
    } catch (error) {
      const refusal = guardErrorIn(error);
      if (refusal) throw refusal;
      if (callerSignal?.aborted) throw new OutboundFetchError('cancelled', 'the caller gave up on the fetch');
      if (signal.aborted)
        throw new OutboundFetchError('timeout', `no complete answer within ${timeoutMs} ms`);
      throw new OutboundFetchError('network', 'the server could not be reached', { cause: error });
    }
  };

  return {
    timeoutMs,
    fetch: (url, fetchOptions = {}) =>
      guarded((signal) => fetchOnce(url, fetchOptions.accept, signal), fetchOptions.signal),
    post: (url, postRequest) => guarded((signal) => postOnce(url, postRequest, signal)),
    close: () => agent.close(),
  };
};
