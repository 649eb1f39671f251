import type { Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { MailMessage } from '@marketplace/mailer';

/** A message to queue: its Message-ID is required, it is the queue's key (one row, one email, per logical message). */
export type QueuedMail = MailMessage & { readonly messageId: string };

/** A claimed message, with the number of attempts including the one just claimed. */
export interface ClaimedMail {
  readonly message: QueuedMail;
  readonly attempts: number;
}

/**
 * `<schema>.outgoing_mail` in the schema of the service that writes the mail. `next_attempt_at_ms` is null once
 * sent; the partial index keeps the worker's look-ups on the unsent rows only.
 */
export const outgoingMailMigration: Migration = {
  id: 'outgoing-mail-001',
  sql: (schema) => `
    CREATE TABLE ${schema}.outgoing_mail (
      message_id text PRIMARY KEY,
      recipient text NOT NULL,
      subject text NOT NULL,
      text_body text NOT NULL,
      html_body text NOT NULL,
      created_at_ms bigint NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at_ms bigint,
      last_error text,
      sent_at_ms bigint
    );
    CREATE INDEX outgoing_mail_unsent ON ${schema}.outgoing_mail (next_attempt_at_ms)
      WHERE sent_at_ms IS NULL;
  `,
};

/**
 * The claimed outgoing-mail queue (`docs/architecture.md`, "Outgoing mail"): a writer records its emails with
 * `enqueue` in its own transaction; the worker claims due rows with `FOR UPDATE SKIP LOCKED` (replicas never
 * claim the same row) and, in the same statement, counts the attempt and pushes the row's due time a lease
 * ahead. The send happens after that statement committed, outside any transaction; `markSent` or `retryLater`
 * records the outcome. A worker that dies mid-send leaves the row due again once the lease ran out: at least
 * once, with the same Message-ID, so receivers and the `.eml` store recognise a repeat.
 */
export class OutgoingMailTable {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.outgoing_mail`;
  }

  /**
   * Queues messages, due at once. A Message-ID already queued is left alone, so a writer that runs again (a
   * redelivered event) queues nothing new. Resolves to the number of messages queued now.
   */
  async enqueue(tx: Queryable, messages: readonly QueuedMail[], now: number): Promise<number> {
    if (messages.length === 0) return 0;
    const column = <K extends keyof QueuedMail>(key: K) => messages.map((message) => message[key]);
    const { rowCount } = await tx.query(
      `INSERT INTO ${this.table}
         (message_id, recipient, subject, text_body, html_body, created_at_ms, next_attempt_at_ms)
       SELECT m.message_id, m.recipient, m.subject, m.text_body, m.html_body, $6, $6
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
           AS m(message_id, recipient, subject, text_body, html_body)
       ON CONFLICT (message_id) DO NOTHING`,
      [column('messageId'), column('to'), column('subject'), column('text'), column('html'), now],
    );
    return rowCount;
  }

  /** Claims up to `limit` due messages for one attempt each (see the class comment). */
  async claimDue(db: Queryable, now: number, limit: number, leaseMs: number): Promise<ClaimedMail[]> {
    return (await this.markSentAndClaimDue(db, [], now, limit, leaseMs)).claimed;
  }

  /**
   * The worker's pass in one statement: marks `sentIds` sent (what the previous claim sent), claims up to
   * `limit` due messages as `claimDue` does, and answers when the earliest unsent message it left is due
   * (undefined when none is waiting), so a worker draining the queue spends one statement per batch.
   */
  async markSentAndClaimDue(
    db: Queryable,
    sentIds: readonly string[],
    now: number,
    limit: number,
    leaseMs: number,
  ): Promise<{ claimed: ClaimedMail[]; nextDueAt: number | undefined }> {
    // Every part reads the snapshot from before the statement, where the rows being marked still look unsent:
    // they are kept out of the claim (a row updated twice in one statement keeps only one of the changes) and
    // out of the next due time, as the rows claimed now are.
    const { rows } = await db.query<{
      message_id: string | null;
      recipient: string;
      subject: string;
      text_body: string;
      html_body: string;
      attempts: number;
      next_due: string | null;
    }>(
      `WITH sent AS (
         UPDATE ${this.table} SET sent_at_ms = $1, next_attempt_at_ms = NULL, last_error = NULL
          WHERE message_id = ANY($4::text[]) AND sent_at_ms IS NULL
       ), due AS (
         SELECT message_id FROM ${this.table}
          WHERE sent_at_ms IS NULL AND next_attempt_at_ms <= $1 AND message_id <> ALL($4::text[])
          ORDER BY next_attempt_at_ms LIMIT $2
          FOR UPDATE SKIP LOCKED
       ), claimed AS (
         UPDATE ${this.table} m SET attempts = m.attempts + 1, next_attempt_at_ms = $1 + $3
           FROM due WHERE m.message_id = due.message_id
         RETURNING m.message_id, m.recipient, m.subject, m.text_body, m.html_body, m.attempts
       ), left_over AS (
         SELECT min(next_attempt_at_ms) AS next_due FROM ${this.table}
          WHERE sent_at_ms IS NULL AND message_id <> ALL($4::text[])
            AND message_id NOT IN (SELECT message_id FROM due)
       )
       SELECT c.*, l.next_due FROM left_over l LEFT JOIN claimed c ON true`,
      [now, limit, leaseMs, sentIds],
    );
    const due = rows[0]?.next_due;
    return {
      claimed: rows.flatMap((row) =>
        row.message_id === null
          ? []
          : [
              {
                message: {
                  messageId: row.message_id,
                  to: row.recipient,
                  subject: row.subject,
                  text: row.text_body,
                  html: row.html_body,
                },
                attempts: Number(row.attempts),
              },
            ],
      ),
      nextDueAt: due === null || due === undefined ? undefined : Number(due),
    };
  }

  /** Marks the messages sent, in one statement however many (the worker's claim sends them together). */
  async markSent(db: Queryable, messageIds: readonly string[], now: number): Promise<void> {
    if (messageIds.length === 0) return;
    await db.query(
      `UPDATE ${this.table} SET sent_at_ms = $2, next_attempt_at_ms = NULL, last_error = NULL
        WHERE message_id = ANY($1::text[]) AND sent_at_ms IS NULL`,
      [messageIds, now],
    );
  }

  async retryLater(db: Queryable, messageId: string, error: string, retryAt: number): Promise<void> {
    await db.query(
      `UPDATE ${this.table} SET last_error = $2, next_attempt_at_ms = $3
        WHERE message_id = $1 AND sent_at_ms IS NULL`,
      [messageId, error, retryAt],
    );
  }

  /** When the earliest unsent message is due, or undefined when none is waiting. */
  async nextDueAt(db: Queryable): Promise<number | undefined> {
    const { rows } = await db.query<{ due: string | null }>(
      `SELECT min(next_attempt_at_ms) AS due FROM ${this.table} WHERE sent_at_ms IS NULL`,
    );
    const due = rows[0]?.due;
    return due === null || due === undefined ? undefined : Number(due);
  }

  /**
   * Deletes messages sent before `before` (their bodies may hold links with tokens; nothing reads them). The
   * writers' own records (applied events, reminder periods, dispute notices) keep a repeat from queueing them again.
   */
  async purgeSentBefore(db: Queryable, before: number): Promise<number> {
    const { rowCount } = await db.query(`DELETE FROM ${this.table} WHERE sent_at_ms < $1`, [before]);
    return rowCount;
  }

  /** Messages queued and not sent yet (for readiness checks and tests). */
  async unsentCount(db: Queryable): Promise<number> {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.table} WHERE sent_at_ms IS NULL`,
    );
    return Number(rows[0]?.n ?? 0);
  }
}
