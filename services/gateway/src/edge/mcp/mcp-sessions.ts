import type { Principal } from '../account.js';
import { apiKeyPrefixOfCredential } from '../account.js';

/**
 * What the session table needs of one MCP session (docs/agents.md, "MCP resource subscriptions"): a way to tell
 * its client that a resource changed, and a way to end it. The SDK transport and server stand behind it.
 */
export interface SessionHandle {
  /** Sends `notifications/resources/updated` over the session's GET stream (dropped when none is open). */
  notifyUpdated(uri: string): void;
  /** Ends the session: its streams close and its client gets 404 on its next request. */
  close(): void;
}

export interface McpSessionLimits {
  /** Sessions one credential (API key or agent token) may hold; a new one ends its least recently used. */
  readonly sessionsPerCredential: number;
  /** Sessions on this replica; beyond, `initialize` is served without a session (no subscriptions). */
  readonly sessions: number;
  /** Resources one credential may be subscribed to, over all its sessions. */
  readonly subscriptionsPerCredential: number;
  /** A session with no request and no open stream for this long is ended. */
  readonly idleMs: number;
}

export const DEFAULT_MCP_SESSION_LIMITS: McpSessionLimits = {
  sessionsPerCredential: 8,
  sessions: 10_000,
  subscriptionsPerCredential: 100,
  idleMs: 10 * 60_000,
};

/** The credential a session is bound to: another key of the same account does not reach it. */
export const credentialKeyOf = (principal: Principal): string =>
  principal.credential.kind === 'api_key'
    ? `api_key:${principal.credential.keyPrefix}`
    : `agent_token:${principal.credential.sessionId}`;

/** A subscription beyond `subscriptionsPerCredential`. */
export class SubscriptionLimitError extends Error {
  constructor(readonly limit: number) {
    super(
      `this credential is subscribed to ${limit} resources already (the limit); unsubscribe from one first`,
    );
    this.name = 'SubscriptionLimitError';
  }
}

interface Session {
  readonly id: string;
  readonly credential: string;
  /** The API key behind the credential: its revocation ends the session. */
  readonly apiKeyPrefix: string;
  readonly handle: SessionHandle;
  readonly subscriptions: Set<string>;
  lastActiveAt: number;
  openStreams: number;
}

/**
 * The MCP sessions of this replica and their resource subscriptions (docs/agents.md, "MCP resource
 * subscriptions"). In memory: a session lives in the replica that holds its stream, and a restart ends it (the
 * client re-initializes and subscribes again). Bounded per credential and per replica; idle sessions are swept.
 */
export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  /** uri → ids of the sessions subscribed to it: a match is fanned out without a scan. */
  private readonly subscribers = new Map<string, Set<string>>();

  constructor(
    readonly limits: McpSessionLimits = DEFAULT_MCP_SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** Whether a new session fits on this replica (its credential's oldest is ended by `add` when it has too many). */
  hasRoom(): boolean {
    return this.sessions.size < this.limits.sessions;
  }

  /** Records an initialized session; the credential's least recently used is ended if it had too many. */
  add(id: string, principal: Principal, handle: SessionHandle): void {
    const credential = credentialKeyOf(principal);
    const own = [...this.sessions.values()].filter((session) => session.credential === credential);
    const excess = own.length + 1 - this.limits.sessionsPerCredential;
    if (excess > 0) {
      own
        .sort((a, b) => a.lastActiveAt - b.lastActiveAt)
        .slice(0, excess)
        .forEach((session) => this.end(session.id));
    }
    this.sessions.set(id, {
      id,
      credential,
      apiKeyPrefix: apiKeyPrefixOfCredential(principal.credential),
      handle,
      subscriptions: new Set(),
      lastActiveAt: this.now(),
      openStreams: 0,
    });
  }

  /** The session `id` when `principal` holds it (and marks it active), else undefined: unknown, ended or not its own. */
  find(id: string, principal: Principal | undefined): SessionHandle | undefined {
    const session = this.sessions.get(id);
    if (!session || !principal || session.credential !== credentialKeyOf(principal)) return undefined;
    session.lastActiveAt = this.now();
    return session.handle;
  }

  /** A GET stream of the session opened; the session is not idle while one is open. */
  streamOpened(id: string): void {
    const session = this.sessions.get(id);
    if (session) session.openStreams++;
  }

  streamClosed(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    session.openStreams = Math.max(0, session.openStreams - 1);
    session.lastActiveAt = this.now();
  }

  /** Subscribes the session to `uri` (again: no change); throws SubscriptionLimitError past the credential's limit. */
  subscribe(id: string, uri: string): void {
    const session = this.sessions.get(id);
    if (!session || session.subscriptions.has(uri)) return;
    const held = [...this.sessions.values()]
      .filter((other) => other.credential === session.credential)
      .reduce((count, other) => count + other.subscriptions.size, 0);
    if (held >= this.limits.subscriptionsPerCredential) {
      throw new SubscriptionLimitError(this.limits.subscriptionsPerCredential);
    }
    session.subscriptions.add(uri);
    const ids = this.subscribers.get(uri) ?? new Set<string>();
    ids.add(id);
    this.subscribers.set(uri, ids);
  }

  /** Unsubscribes the session from `uri`; unsubscribing from what it is not subscribed to changes nothing. */
  unsubscribe(id: string, uri: string): void {
    this.sessions.get(id)?.subscriptions.delete(uri);
    const ids = this.subscribers.get(uri);
    if (!ids) return;
    ids.delete(id);
    if (ids.size === 0) this.subscribers.delete(uri);
  }

  subscriptionsOf(id: string): readonly string[] {
    return [...(this.sessions.get(id)?.subscriptions ?? [])];
  }

  /** Tells every session subscribed to one of `uris`; returns how many notifications were handed over. */
  notifyUpdated(uris: readonly string[]): number {
    let sent = 0;
    for (const uri of uris) {
      for (const id of this.subscribers.get(uri) ?? []) {
        this.sessions.get(id)?.handle.notifyUpdated(uri);
        sent++;
      }
    }
    return sent;
  }

  /** Forgets the session (its transport closed, or the client sent DELETE). */
  remove(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    for (const uri of session.subscriptions) this.unsubscribe(id, uri);
  }

  /** Ends the sessions idle for `idleMs` (no request, no open stream); returns how many. */
  sweep(): number {
    const before = this.now() - this.limits.idleMs;
    const idle = [...this.sessions.values()].filter(
      (session) => session.openStreams === 0 && session.lastActiveAt <= before,
    );
    idle.forEach((session) => this.end(session.id));
    return idle.length;
  }

  /**
   * Ends the sessions opened with the key `apiKeyPrefix` or with an agent token issued for it (the key was revoked:
   * an open stream must not outlive it); returns how many.
   */
  endKey(apiKeyPrefix: string): number {
    const revoked = [...this.sessions.values()].filter((session) => session.apiKeyPrefix === apiKeyPrefix);
    revoked.forEach((session) => this.end(session.id));
    return revoked.length;
  }

  /** Ends every session (the gateway stops: their clients re-initialize elsewhere). */
  closeAll(): void {
    [...this.sessions.keys()].forEach((id) => this.end(id));
  }

  private end(id: string): void {
    const session = this.sessions.get(id);
    this.remove(id);
    session?.handle.close();
  }
}
