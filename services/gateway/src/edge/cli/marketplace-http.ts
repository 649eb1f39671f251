/** The CLI's HTTP calls to a marketplace, with the failures an operator acts on said in words. */

export const REQUEST_TIMEOUT_MS = 10_000;

export type CallOutcome =
  | { readonly reached: true; readonly status: number; readonly text: string }
  | { readonly reached: false; readonly message: string };

/** `init` without a signal: every call is bounded by REQUEST_TIMEOUT_MS. */
export const callMarketplace = async (
  url: URL,
  init: RequestInit,
  doFetch: typeof fetch = fetch,
): Promise<CallOutcome> => {
  try {
    const response = await doFetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    return { reached: true, status: response.status, text: await response.text() };
  } catch (error) {
    return { reached: false, message: unreachable(url, error) };
  }
};

const unreachable = (url: URL, error: unknown): string => {
  // fetch fails with "fetch failed" and the socket's error (ECONNREFUSED, ENOTFOUND) as its cause.
  const { message, cause } = (error ?? {}) as {
    message?: string;
    cause?: { code?: string; message?: string };
  };
  const reason = cause?.code ?? cause?.message ?? message ?? String(error);
  return (
    `the marketplace is not reachable at ${url.origin} (${reason}): start it with ` +
    '`ADMIN_TOKEN=… pnpm start`, or set MARKETPLACE_URL to where it listens (PORT, HOST)'
  );
};

/** A refusal as one readable line; the gateway's "no route" 404 on /api/admin means it runs without ADMIN_TOKEN. */
export const describeRefusal = (url: URL, status: number, text: string): string => {
  const problem = parseProblem(text);
  if (
    status === 404 &&
    url.pathname.startsWith('/api/admin/') &&
    problem?.detail?.startsWith('no route for') === true
  ) {
    return 'the admin API is off: start the marketplace with ADMIN_TOKEN set (the same value as here)';
  }
  if (problem === undefined) return `${status} ${text.slice(0, 500)}`;
  const violations = (problem.errors ?? []).map(({ path, message }) => `\n  ${path}: ${message}`).join('');
  return `${status} ${problem.title ?? ''}${problem.detail ? `: ${problem.detail}` : ''}${violations}`;
};

interface Problem {
  readonly title?: string;
  readonly detail?: string;
  readonly errors?: readonly { path: string; message: string }[];
}

const parseProblem = (text: string): Problem | undefined => {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
};
