import { mkdir, rename, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { Mailer, MailMessage } from './mailer.port.js';

export interface SmtpMailerOptions {
  /** `smtp://user:pass@host:587` or `smtps://...` (nodemailer's connection URL). */
  readonly url: string;
  readonly from: string;
  /** Bound on connecting, the greeting and each socket inactivity; default 10 s. */
  readonly timeoutMs?: number;
}

export interface EmlMailerOptions {
  /** Where `.eml` files are written (embedded mode: `DATA_DIR/mail`). */
  readonly directory: string;
  readonly from: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;

const envelopeOf = (from: string, message: MailMessage) => ({
  from,
  to: message.to,
  subject: message.subject,
  text: message.text,
  html: message.html,
  ...(message.messageId === undefined ? {} : { messageId: message.messageId }),
});

/**
 * Opens each of the pool's connections with Nagle's algorithm off and hands it over connected (nodemailer then
 * greets, and upgrades to TLS for `smtps`). nodemailer writes a message's closing `.` apart from its body: with
 * Nagle on, that write waited for the server's delayed ACK (40 ms on Linux), so every message took about 45 ms
 * on an idle connection, whatever the server, and 5 connections sent about 100 messages a second.
 */
const connectWithoutDelay =
  (timeoutMs: number) =>
  (
    options: { host?: string | undefined; port?: number | undefined; secure?: boolean | undefined },
    callback: (error: Error | null, socketOptions: { connection: Socket } | false) => void,
  ): void => {
    // nodemailer's own defaults for a URL without a port.
    const port = Number(options.port) || (options.secure === true ? 465 : 587);
    const socket = connect({ host: options.host ?? 'localhost', port, noDelay: true });
    const fail = (error: Error): void => {
      socket.destroy();
      callback(error, false);
    };
    const timedOut = (): void =>
      fail(new Error(`connecting to the SMTP server timed out after ${timeoutMs} ms`));
    socket.setTimeout(timeoutMs, timedOut);
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.off('error', fail);
      socket.setTimeout(0);
      socket.off('timeout', timedOut);
      callback(null, { connection: socket });
    });
  };

/**
 * Sends through an SMTP server with nodemailer, every wait bounded. Pooled: messages reuse open connections
 * instead of a connection (TCP, greeting, EHLO) each; what the URL sets wins over these options.
 */
export const createSmtpMailer = ({
  url,
  from,
  timeoutMs = DEFAULT_TIMEOUT_MS,
}: SmtpMailerOptions): Mailer => {
  // The pool is built here: createTransport reads nothing but a URL's own settings, and a second argument as
  // message defaults (so the bounds set there never reached the connection).
  const transport = nodemailer.createTransport(
    new SMTPPool({
      url,
      pool: true,
      getSocket: connectWithoutDelay(timeoutMs),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    }),
  );
  return {
    send: async (message) => {
      await transport.sendMail(envelopeOf(from, message));
    },
    close: async () => transport.close(),
  };
};

/** A file name from the Message-ID, so the same message sent twice is one file. */
const fileNameOf = (messageId: string): string => `${messageId.replace(/[^A-Za-z0-9._@-]/g, '_')}.eml`;

/**
 * Writes each message as an RFC 5322 `.eml` file (nodemailer's stream transport builds exactly what SMTP would
 * carry), for `pnpm start` without a mail server: open them with any mail client.
 */
export const createEmlMailer = ({ directory, from }: EmlMailerOptions): Mailer => {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  let prepared: Promise<unknown> | undefined;
  return {
    send: async (message) => {
      const messageId = message.messageId ?? `<${randomUUID()}@marketplace.local>`;
      const info = await transport.sendMail({ ...envelopeOf(from, message), messageId });
      await (prepared ??= mkdir(directory, { recursive: true }));
      const path = join(directory, fileNameOf(messageId));
      const temporary = `${path}.${randomUUID()}.tmp`;
      await writeFile(temporary, info.message as Buffer);
      await rename(temporary, path);
    },
    close: async () => transport.close(),
  };
};
