export type { Mailer, MailMessage } from './mailer.port.js';
export {
  createEmlMailer,
  createSmtpMailer,
  type EmlMailerOptions,
  type SmtpMailerOptions,
} from './nodemailer.mailer.js';
export { createMailer, mailDirectoryOf, mailerConfigSchema, type MailerConfig } from './mailer.config.js';
