import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SMTPServer } from 'smtp-server';
import { createEmlMailer, createSmtpMailer } from '../src/nodemailer.mailer.js';
import type { Mailer, MailMessage } from '../src/mailer.port.js';

const FROM = 'Marketplace <no-reply@marketplace.test>';
const MESSAGE: MailMessage = {
  to: 'ops@tarnwick.test',
  subject: 'Is product_7 still available?',
  text: 'Please confirm: http://localhost:8080/api/ucp/catalog/products/product_7',
  html: '<p>Please confirm: <a href="http://localhost:8080/api/ucp/catalog/products/product_7">product_7</a></p>',
  messageId: '<staleness.product_7.1@marketplace.test>',
};

interface Received {
  readonly from: string;
  readonly to: string[];
  readonly raw: string;
}

describe('SMTP mailer against a real SMTP server', () => {
  const received: Received[] = [];
  let connections = 0;
  let server: SMTPServer;
  let mailer: Mailer;

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onConnect(_session, callback) {
        connections++;
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map(({ address }) => address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    server.listen(0, '127.0.0.1');
    await once(server.server, 'listening');
    const { port } = server.server.address() as AddressInfo;
    mailer = createSmtpMailer({ url: `smtp://127.0.0.1:${port}`, from: FROM, timeoutMs: 5_000 });
  });

  afterAll(async () => {
    await mailer.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers a multipart message with plain text, HTML and the listing link', async () => {
    await mailer.send(MESSAGE);
    expect(received).toHaveLength(1);
    const [mail] = received;
    expect(mail?.from).toBe('no-reply@marketplace.test');
    expect(mail?.to).toEqual(['ops@tarnwick.test']);
    expect(mail?.raw).toContain('Subject: Is product_7 still available?');
    expect(mail?.raw).toContain('Message-ID: <staleness.product_7.1@marketplace.test>');
    expect(mail?.raw).toMatch(/Content-Type: multipart\/alternative/);
    expect(mail?.raw).toMatch(/Content-Type: text\/plain/);
    expect(mail?.raw).toMatch(/Content-Type: text\/html/);
    expect(mail?.raw).toContain('http://localhost:8080/api/ucp/catalog/products/product_7');
  });

  it('sends one message after another over one connection', async () => {
    const before = { connections, received: received.length };
    for (const n of [1, 2, 3]) await mailer.send({ ...MESSAGE, messageId: `<pooled.${n}@marketplace.test>` });
    expect(received.length - before.received).toBe(3);
    expect(connections - before.connections).toBeLessThanOrEqual(1);
  });

  it('sends back to back without waiting on delayed ACKs (Nagle off)', async () => {
    // With Nagle on, each message's closing `.` waited for the server's delayed ACK: 40 ms or more each.
    const startedAt = performance.now();
    for (let n = 0; n < 20; n++)
      await mailer.send({ ...MESSAGE, messageId: `<back-to-back.${n}@marketplace.test>` });
    expect((performance.now() - startedAt) / 20).toBeLessThan(20);
  });

  it('rejects within its bound when the server accepts the connection but never greets', async () => {
    const silent = createServer(() => {});
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as AddressInfo;
    const mute = createSmtpMailer({ url: `smtp://127.0.0.1:${port}`, from: FROM, timeoutMs: 500 });
    const startedAt = Date.now();
    await expect(mute.send(MESSAGE)).rejects.toThrow();
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    await mute.close();
    silent.close();
  }, 15_000);

  it('rejects, bounded, when the server is unreachable', async () => {
    const unreachable = createSmtpMailer({ url: 'smtp://127.0.0.1:1', from: FROM, timeoutMs: 1_000 });
    await expect(unreachable.send(MESSAGE)).rejects.toThrow();
    await unreachable.close();
  });
});

describe('.eml mailer', () => {
  it('writes one RFC 5322 file per message, the same file for the same Message-ID', async () => {
    const directory = join(mkdtempSync(join(tmpdir(), 'mailer-')), 'mail');
    const mailer = createEmlMailer({ directory, from: FROM });
    await mailer.send(MESSAGE);
    await mailer.send(MESSAGE);
    await mailer.send({ ...MESSAGE, messageId: undefined, subject: 'another' });
    const files = readdirSync(directory).sort();
    expect(files).toHaveLength(2);
    expect(files).toContain('_staleness.product_7.1@marketplace.test_.eml');
    const eml = readFileSync(join(directory, '_staleness.product_7.1@marketplace.test_.eml'), 'utf8');
    expect(eml).toContain('To: ops@tarnwick.test');
    expect(eml).toContain('From: Marketplace <no-reply@marketplace.test>');
    expect(eml).toMatch(/Content-Type: text\/html/);
    await mailer.close();
  });
});
