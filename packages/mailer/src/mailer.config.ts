import { join } from 'node:path';
import { z } from 'zod';
import type { Mailer } from './mailer.port.js';
import { createEmlMailer, createSmtpMailer } from './nodemailer.mailer.js';

export const mailerConfigSchema = z.object({
  /** Absent: messages are written as `.eml` files under `DATA_DIR/mail`. */
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).default('Liquidation Marketplace <no-reply@marketplace.local>'),
});

export type MailerConfig = z.infer<typeof mailerConfigSchema>;

export const mailDirectoryOf = (dataDir: string): string => join(dataDir, 'mail');

/** SMTP when `SMTP_URL` is set, the `.eml` store otherwise. */
export const createMailer = (config: MailerConfig, dataDir: string): Mailer =>
  config.SMTP_URL
    ? createSmtpMailer({ url: config.SMTP_URL, from: config.MAIL_FROM })
    : createEmlMailer({ directory: mailDirectoryOf(dataDir), from: config.MAIL_FROM });
