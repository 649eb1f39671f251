/** One email: both a plain text and an HTML body, as every message of the marketplace carries. */
export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /**
   * Stable Message-ID (`<local@domain>`) when the same logical message may be sent again (after a crash between
   * sending and recording it): receivers and the `.eml` store recognise the repeat.
   */
  readonly messageId?: string;
}

export interface Mailer {
  /** Resolves once the message was accepted (by the SMTP server, or written to disk); bounded. */
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
