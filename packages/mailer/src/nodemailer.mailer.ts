import { mkdir, rename, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
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
