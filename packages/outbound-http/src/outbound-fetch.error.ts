/** Why a guarded fetch gave up; callers turn it into a message for whoever supplied the URL. */
export type OutboundFetchFailure =
  | 'bad_url'
  | 'forbidden_address'
  | 'too_many_redirects'
  | 'http_status'
  | 'too_large'
  | 'timeout'
  | 'network'
  /** The caller's signal aborted the fetch before it completed. */
  | 'cancelled';

export class OutboundFetchError extends Error {
  constructor(
    readonly reason: OutboundFetchFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundFetchError';
  }
}
