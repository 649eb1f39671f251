import type { Logger } from '@marketplace/platform';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { quoteIdent } from './database.port.js';

type NotificationHandler = (payload: string) => void;

interface Subscription {
  readonly handlers: Set<NotificationHandler>;
  /** Settles once LISTEN ran; later callers for the same channel wait for the same statement. */
  readonly listening: Promise<void>;
}

const RECONNECT_FIRST_DELAY_MS = 100;
const RECONNECT_MAX_DELAY_MS = 5_000;

/**
 * Every LISTEN of one database on one dedicated connection, outside the pool (the pool recycles idle
 * connections, which would drop the LISTENs). When the connection is lost it reconnects with backoff and
 * LISTENs again on every channel that still has handlers.
 */
export class PostgresNotificationListener {
  readonly #subscriptions = new Map<string, Subscription>();
  readonly #closing = new AbortController();
  /** The connection being opened or open; undefined when none is wanted or it was lost. */
  #connection: Promise<pg.Client> | undefined;
  #current: pg.Client | undefined;
  #reconnecting = false;

  constructor(
    private readonly clientConfig: pg.ClientConfig,
    private readonly logger: Logger,
  ) {}

  async listen(channel: string, onNotify: NotificationHandler): Promise<() => Promise<void>> {
    const quoted = quoteIdent(channel);
    if (this.#closing.signal.aborted) throw new Error('the database is closed');
    let subscription = this.#subscriptions.get(channel);
    if (subscription === undefined) {
      subscription = {
        handlers: new Set(),
        listening: this.#client().then(async (client) => {
          await client.query(`LISTEN ${quoted}`);
        }),
      };
      this.#subscriptions.set(channel, subscription);
    }
    subscription.handlers.add(onNotify);
    try {
      await subscription.listening;
    } catch (error) {
      if (this.#subscriptions.get(channel) === subscription) this.#subscriptions.delete(channel);
      throw error;
    }
    return () => this.#unlisten(channel, subscription, onNotify);
  }

  async close(): Promise<void> {
    this.#closing.abort();
    this.#subscriptions.clear();
    const client = this.#current;
    this.#current = undefined;
    this.#connection = undefined;
    await client?.end();
  }

  async #unlisten(channel: string, subscription: Subscription, onNotify: NotificationHandler): Promise<void> {
    subscription.handlers.delete(onNotify);
    if (subscription.handlers.size > 0 || this.#subscriptions.get(channel) !== subscription) return;
    this.#subscriptions.delete(channel);
    // If the connection is down (or fails now) there is nothing to UNLISTEN: a reconnect only LISTENs to the
    // channels still wanted.
    await this.#current?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
  }

  #client(): Promise<pg.Client> {
    if (this.#connection === undefined) {
      const connection = this.#connect();
      this.#connection = connection;
      connection.catch(() => {
        if (this.#connection === connection) this.#connection = undefined;
      });
    }
    return this.#connection;
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client(this.clientConfig);
    client.on('notification', ({ channel, payload }) => this.#dispatch(channel, payload ?? ''));
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client));
    try {
      await client.connect();
      for (const channel of this.#subscriptions.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
      if (this.#closing.signal.aborted) throw new Error('the database is closed');
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.#current = client;
    return client;
  }

  #lost(client: pg.Client, error?: Error): void {
    if (client !== this.#current) return;
    this.#current = undefined;
    this.#connection = undefined;
    if (this.#closing.signal.aborted || this.#subscriptions.size === 0) return;
    this.logger.warn({ err: error }, 'LISTEN connection lost; reconnecting');
    void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    if (this.#reconnecting) return;
    this.#reconnecting = true;
    try {
      let delayMs = RECONNECT_FIRST_DELAY_MS;
      while (!this.#closing.signal.aborted && this.#current === undefined) {
        await sleep(delayMs, undefined, { signal: this.#closing.signal }).catch(() => undefined);
        if (this.#closing.signal.aborted) return;
        try {
          await this.#client();
          this.logger.info({ channels: [...this.#subscriptions.keys()] }, 'LISTEN connection restored');
        } catch (error) {
          this.logger.warn({ err: error, retryInMs: delayMs }, 'LISTEN reconnect failed');
          delayMs = Math.min(delayMs * 2, RECONNECT_MAX_DELAY_MS);
        }
      }
    } finally {
      this.#reconnecting = false;
    }
  }

  #dispatch(channel: string, payload: string): void {
    for (const handler of this.#subscriptions.get(channel)?.handlers ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.logger.error({ err: error, channel }, 'notification handler threw');
      }
    }
  }
}
