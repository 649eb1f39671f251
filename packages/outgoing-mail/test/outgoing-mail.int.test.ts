import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate, quoteIdent } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '@marketplace/database/testing';
import type { Mailer, MailMessage } from '@marketplace/mailer';
import { createLogger, ManualClock, systemClock } from '@marketplace/platform';
import {
  OutgoingMailTable,
  outgoingMailMigration,
  startOutgoingMailWorker,
  type QueuedMail,
} from '../src/index.js';

const logger = createLogger({ service: 'outgoing-mail-test', level: 'silent' });

let sequence = 0;
const mail = (): QueuedMail => {
  sequence += 1;
  return {
    to: 'seller@example.test',
    subject: `Message ${sequence}`,
    text: `Body ${sequence}`,
    html: `<p>Body ${sequence}</p>`,
    messageId: `<test.${sequence}.${Date.now()}@market.example.test>`,
  };
};

/** `db` with every statement sent through it recorded in `statements`: the worker's statements per batch. */
const countingStatements = (db: Database): { statements: string[]; counting: Database } => {
  const statements: string[] = [];
  const counting: Database = {
    ...db,
    query: async (sql, params) => {
      statements.push(sql);
      return db.query(sql, params);
    },
  };
  return { statements, counting };
};

/** Records every send; `failures` sends throw first, `gate` (when set) holds each send until it resolves. */
class ScriptedMailer implements Mailer {
  readonly sent: MailMessage[] = [];
  readonly attempted: MailMessage[] = [];
  failures = 0;
  duringSend: ((message: MailMessage) => Promise<void>) | undefined;

  async send(message: MailMessage): Promise<void> {
    this.attempted.push(message);
    await this.duringSend?.(message);
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('421 mail server busy');
    }
    this.sent.push(message);
  }

  async close(): Promise<void> {}
}

describe.each(testEngines())('outgoing mail on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let table: OutgoingMailTable;

  beforeAll(async () => {
    db = await create();
    schema = freshSchemaName('outgoing_mail');
    await migrate(db, schema, [outgoingMailMigration]);
    table = new OutgoingMailTable(schema);
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  const ownQueue = async () => {
    const ownSchema = freshSchemaName('outgoing_mail_own');
    await migrate(db, ownSchema, [outgoingMailMigration]);
    return { own: new OutgoingMailTable(ownSchema), ownSchema };
  };

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it('sends mail queued in a committed transaction with no transaction open: the database serves others meanwhile', async () => {
    const message = mail();
    await db.transaction((tx) => table.enqueue(tx, [message], systemClock.now()));
    const mailer = new ScriptedMailer();
    let releaseSend!: () => void;
    const sendHeld = new Promise<void>((resolve) => (releaseSend = resolve));
    let whileSending: string | undefined;
    mailer.duringSend = async () => {
      // On the embedded engine (one session) this would wait forever behind an open transaction, and on both the
      // database handle refuses to run inside one of its transactions; NOWAIT fails if the row were still locked.
      whileSending = await db.transaction(async (tx) => {
        const { rows } = await tx.query<{ subject: string }>(
          `SELECT subject FROM ${quoteIdent(schema)}.outgoing_mail WHERE message_id = $1 FOR UPDATE NOWAIT`,
          [message.messageId],
        );
        return rows[0]?.subject;
      });
      await sendHeld;
    };
    const worker = startOutgoingMailWorker({ db, table, mailer, clock: systemClock, logger, runLoop: false });
    const processing = worker.processDue();
    for (let waited = 0; whileSending === undefined && waited < 5_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(whileSending).toBe(message.subject);
    expect(await table.unsentCount(db)).toBe(1);
    releaseSend();
    expect(await processing).toBe(1);
    expect(mailer.sent.map((sent) => sent.messageId)).toEqual([message.messageId]);
    expect(await table.unsentCount(db)).toBe(0);
    await worker.stop();
  });

  it('retries a failing send with a growing backoff, with the same Message-ID, until it is accepted', async () => {
    const clock = new ManualClock(1_000_000);
    const message = mail();
    await db.transaction((tx) => table.enqueue(tx, [message], clock.now()));
    const mailer = new ScriptedMailer();
    mailer.failures = 2;
    const worker = startOutgoingMailWorker({
      db,
      table,
      mailer,
      clock,
      logger,
      runLoop: false,
      retryDelaysMs: [5_000, 30_000],
    });
    expect(await worker.processDue()).toBe(0);
    expect(await table.nextDueAt(db)).toBe(1_005_000);
    clock.advance(4_999);
    expect(await worker.processDue()).toBe(0);
    expect(mailer.attempted).toHaveLength(1);
    clock.advance(1);
    expect(await worker.processDue()).toBe(0);
    expect(await table.nextDueAt(db)).toBe(1_035_000);
    clock.advance(30_000);
    expect(await worker.processDue()).toBe(1);
    expect(mailer.attempted.map((sent) => sent.messageId)).toEqual([
      message.messageId,
      message.messageId,
      message.messageId,
    ]);
    expect(await table.nextDueAt(db)).toBeUndefined();
    clock.advance(3_600_000);
    expect(await worker.processDue()).toBe(0);
    expect(mailer.sent).toHaveLength(1);
  });

  it('queues a Message-ID once: a writer that runs again (a redelivered event) sends nothing more', async () => {
    const clock = new ManualClock(2_000_000);
    const message = mail();
    expect(await db.transaction((tx) => table.enqueue(tx, [message], clock.now()))).toBe(1);
    expect(await db.transaction((tx) => table.enqueue(tx, [message], clock.now()))).toBe(0);
    const mailer = new ScriptedMailer();
    const worker = startOutgoingMailWorker({ db, table, mailer, clock, logger, runLoop: false });
    expect(await worker.processDue()).toBe(1);
    expect(await db.transaction((tx) => table.enqueue(tx, [message], clock.now()))).toBe(0);
    expect(await worker.processDue()).toBe(0);
    expect(mailer.sent.map((sent) => sent.messageId)).toEqual([message.messageId]);
  });

  it('deletes sent messages older than the cut-off, never unsent ones', async () => {
    const clock = new ManualClock(4_000_000);
    const sent = mail();
    const unsent = mail();
    await db.transaction((tx) => table.enqueue(tx, [sent], clock.now()));
    const mailer = new ScriptedMailer();
    const worker = startOutgoingMailWorker({ db, table, mailer, clock, logger, runLoop: false });
    expect(await worker.processDue()).toBe(1);
    await db.transaction((tx) => table.enqueue(tx, [unsent], clock.now()));
    const kept = async () =>
      (
        await db.query<{ message_id: string }>(
          `SELECT message_id FROM ${quoteIdent(schema)}.outgoing_mail WHERE message_id = ANY($1::text[])`,
          [[sent.messageId, unsent.messageId]],
        )
      ).rows
        .map((row) => row.message_id)
        .sort();
    // Sent at 4_000_000: kept by a cut-off at that instant, deleted by one after it.
    await table.purgeSentBefore(db, 4_000_000);
    expect(await kept()).toEqual([sent.messageId, unsent.messageId].sort());
    await table.purgeSentBefore(db, 4_000_001);
    expect(await kept()).toEqual([unsent.messageId]);
    expect(await worker.processDue()).toBe(1);
  });

  it('takes a claimed message again once its lease ran out (its worker died mid-send)', async () => {
    const clock = new ManualClock(3_000_000);
    const message = mail();
    await db.transaction((tx) => table.enqueue(tx, [message], clock.now()));
    const claimed = await table.claimDue(db, clock.now(), 10, 60_000);
    expect(claimed.map(({ message: { messageId } }) => messageId)).toEqual([message.messageId]);
    const mailer = new ScriptedMailer();
    const worker = startOutgoingMailWorker({
      db,
      table,
      mailer,
      clock,
      logger,
      runLoop: false,
      leaseMs: 60_000,
    });
    expect(await worker.processDue()).toBe(0);
    clock.advance(60_000);
    expect(await worker.processDue()).toBe(1);
    expect(mailer.sent.map((sent) => sent.messageId)).toEqual([message.messageId]);
  });

  it("records a claim's sends in one statement, and retries only the one that failed", async () => {
    const messages = [mail(), mail(), mail()];
    await db.transaction((tx) => table.enqueue(tx, messages, systemClock.now()));
    const { statements, counting } = countingStatements(db);
    const mailer = new ScriptedMailer();
    mailer.duringSend = async (message) => {
      if (message.messageId === messages[1]!.messageId) throw new Error('550 mailbox unavailable');
    };
    const worker = startOutgoingMailWorker({
      db: counting,
      table,
      mailer,
      clock: systemClock,
      logger,
      runLoop: false,
    });
    expect(await worker.processDue()).toBe(2);
    // The claim, the failure's backoff, and one statement marking both sends.
    expect(statements.filter((sql) => sql.startsWith('UPDATE') && /SET sent_at_ms/.test(sql))).toHaveLength(
      1,
    );
    expect(statements).toHaveLength(3);
    expect(await table.unsentCount(db)).toBe(1);
    expect(mailer.sent.map((sent) => sent.messageId)).toEqual([
      messages[0]!.messageId,
      messages[2]!.messageId,
    ]);
    await worker.stop();
  });

  it("draining the queue, the loop records each batch's sends in the statement that claims the next", async () => {
    // A queue of its own: what the other cases leave due would join the batches.
    const { own, ownSchema } = await ownQueue();
    const messages = [mail(), mail(), mail(), mail(), mail()];
    await db.transaction((tx) => own.enqueue(tx, messages, systemClock.now()));
    const { statements, counting } = countingStatements(db);
    const mailer = new ScriptedMailer();
    const worker = startOutgoingMailWorker({
      db: counting,
      table: own,
      mailer,
      clock: systemClock,
      logger,
      batchSize: 2,
      pollMs: 60_000,
    });
    try {
      for (let waited = 0; (await own.unsentCount(db)) > 0 && waited < 10_000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await own.unsentCount(db)).toBe(0);
    } finally {
      await worker.stop();
      await dropSchema(db, ownSchema);
    }
    expect(mailer.sent.map((sent) => sent.messageId)).toEqual(messages.map((message) => message.messageId));
    // Claims of 2, 2 and 1, then the pass that records the last one and finds nothing due; the hourly purge.
    expect(statements.filter((sql) => sql.startsWith('WITH sent AS'))).toHaveLength(4);
    expect(statements.filter((sql) => sql.startsWith('DELETE'))).toHaveLength(1);
    expect(statements).toHaveLength(5);
  });

  it('gathers the mail of transactions committed one after another into one claim and one mark', async () => {
    const { own, ownSchema } = await ownQueue();
    const { statements, counting } = countingStatements(db);
    const mailer = new ScriptedMailer();
    const worker = startOutgoingMailWorker({
      db: counting,
      table: own,
      mailer,
      clock: systemClock,
      logger,
      pollMs: 60_000,
      gatherMs: 500,
    });
    try {
      // The loop's first pass, on the empty queue.
      for (let waited = 0; statements.length < 2 && waited < 10_000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      for (const message of [mail(), mail(), mail()]) {
        await db.transaction((tx) => own.enqueue(tx, [message], systemClock.now()));
        worker.wake();
      }
      for (let waited = 0; (await own.unsentCount(db)) > 0 && waited < 10_000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(mailer.sent).toHaveLength(3);
      // The first pass, one claim of the three, and the mark of their sends (with a claim that finds nothing).
      expect(statements.filter((sql) => sql.startsWith('WITH sent AS'))).toHaveLength(3);
    } finally {
      await worker.stop();
      await dropSchema(db, ownSchema);
    }
  });

  it('never claims a message in the statement that marks it sent, even once its lease ran out', async () => {
    const { own, ownSchema } = await ownQueue();
    const clock = new ManualClock(5_000_000);
    const [sent, waiting] = [mail(), mail()];
    await db.transaction((tx) => own.enqueue(tx, [sent, waiting], clock.now()));
    await own.claimDue(db, clock.now(), 2, 60_000);
    clock.advance(60_000);
    await own.retryLater(db, waiting.messageId, 'busy', clock.now() + 5_000);
    const pass = await own.markSentAndClaimDue(db, [sent.messageId], clock.now(), 10, 60_000);
    expect(pass.claimed).toEqual([]);
    expect(pass.nextDueAt).toBe(clock.now() + 5_000);
    expect(await own.unsentCount(db)).toBe(1);
    await dropSchema(db, ownSchema);
  });

  it('wakes on demand: mail queued and committed is sent without waiting for the poll', async () => {
    const mailer = new ScriptedMailer();
    const worker = startOutgoingMailWorker({ db, table, mailer, clock: systemClock, logger, pollMs: 60_000 });
    try {
      const message = mail();
      await db.transaction((tx) => table.enqueue(tx, [message], systemClock.now()));
      worker.wake();
      for (let waited = 0; mailer.sent.length === 0 && waited < 10_000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(mailer.sent.map((sent) => sent.messageId)).toEqual([message.messageId]);
    } finally {
      await worker.stop();
    }
  });
});
