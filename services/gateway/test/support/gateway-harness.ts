import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createFilesystemBlobStore } from '@marketplace/blobstore';
import type { Database } from '@marketplace/database';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import { dropSchema, freshSchemaName } from '@marketplace/database/testing';
import type { Logger, ServiceHandle } from '@marketplace/platform';
import { ManualClock, REDACTED_PATHS } from '@marketplace/platform';
import type { GatewayOptions } from '../../src/edge/gateway.service.js';
import { startGateway } from '../../src/edge/gateway.service.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** Every log line, as written: the tests read them to prove that no key is ever logged. */
export class CapturedLog {
  readonly lines: string[] = [];
  readonly logger: Logger = pino(
    { level: 'debug', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        this.lines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );

  get text(): string {
    return this.lines.join('');
  }
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON when the answer is JSON, the raw text otherwise. */
  readonly body: unknown;
}

/** A gateway on an ephemeral port over a fresh identity schema and a fresh embedded event log, with its log captured. */
export class TestGateway {
  private constructor(
    readonly handle: ServiceHandle,
    readonly baseUrl: string,
    readonly log: CapturedLog,
    private readonly db: Database,
    /** The fresh identity schema of this gateway. */
    readonly schema: string,
    /** Where the gateway publishes account events (fresh schema per gateway). */
    readonly eventLog: EventLog,
    /** The schema of that event log's tables. */
    readonly eventLogSchema: string,
  ) {}

  static async start(
    db: Database,
    options: Partial<Omit<GatewayOptions, 'db' | 'log' | 'logger' | 'clock' | 'identitySchema'>> &
      Pick<GatewayOptions, 'services'>,
    log = new CapturedLog(),
  ): Promise<TestGateway> {
    const schema = freshSchemaName('gateway_test');
    const eventLogSchema = freshSchemaName('gateway_eventlog_test');
    const eventLog = await createEmbeddedEventLog({ db, schema: eventLogSchema });
    const handle = await startGateway({
      db,
      log: eventLog,
      images: createFilesystemBlobStore(mkdtempSync(join(tmpdir(), 'gateway-images-'))),
      logger: log.logger,
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
      http: { host: '127.0.0.1', port: 0 },
      identitySchema: schema,
      grpcDeadlineMs: 2_000,
      ...options,
    });
    return new TestGateway(handle, `http://${handle.address}`, log, db, schema, eventLog, eventLogSchema);
  }

  async stop(): Promise<void> {
    await this.handle.stop();
    await this.eventLog.close();
    await dropSchema(this.db, this.schema);
    await dropSchema(this.db, this.eventLogSchema);
  }

  async call(path: string, init: RequestInit = {}): Promise<Answer> {
    const response = await fetch(new URL(path, this.baseUrl), {
      ...init,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    const isJson = /json/.test(response.headers.get('content-type') ?? '');
    return {
      status: response.status,
      headers: response.headers,
      body: isJson && text !== '' ? JSON.parse(text) : text,
    };
  }

  postJson(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    return this.call(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  }

  /** Opens an account through the admin API and returns its id and first key. */
  async createAccount(
    role: 'seller' | 'buyer',
    name = `${role} one`,
  ): Promise<{ accountId: number; apiKey: string }> {
    const { status, body } = await this.postJson(
      '/api/admin/accounts',
      { role, name, email: `${role}@example.test`, country: 'US' },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    if (status !== 201) throw new Error(`account creation answered ${status}: ${JSON.stringify(body)}`);
    const created = body as { account_id: number; api_key: string };
    return { accountId: created.account_id, apiKey: created.api_key };
  }
}

/**
 * Every backend the gateway requires, at one address: the in-memory backends answer as the listing and catalog
 * services; a call to another service fails there as it would against a backend that is down.
 */
export const backendsAt = (address: string): GatewayOptions['services'] => ({
  listing: address,
  catalog: address,
  subscription: address,
  order: address,
  quote: address,
});
