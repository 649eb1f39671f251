import type { Database, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { EventLog, LogConsumer } from '@marketplace/eventlog';
import type { Logger } from '@marketplace/platform';

/**
 * A projection that can be rebuilt from its topic: generation 1 consumes as `<name>`, each rebuild moves to
 * `<name>-g<n>` from the beginning of the topic, in the table `projection_generations`, so a restart resumes the
 * current generation. `<service>-<purpose>` rather than dots: the EventLog port allows none in group names.
 */
export interface GenerationalProjection {
  /** True while consuming (false during a rebuild's switch and after stop). */
  isRunning(): boolean;
  /** The consumer group currently consuming. */
  group(): string;
  /**
   * Closes the log consumer (the message in hand finishes), then in one transaction `reset`s the read model,
   * forgets the old group's applied events and offsets and bumps the generation; then deletes the old group from
   * the log, `afterReset` (in-memory state) and a log consumer of the new generation from the beginning. One
   * rebuild at a time.
   */
  rebuild(): Promise<void>;
  stop(): Promise<void>;
}

export const generationGroup = (name: string, generation: number): string =>
  generation === 1 ? name : `${name}-g${generation}`;

export const startGenerationalProjection = async (options: {
  readonly db: Database;
  readonly schema: string;
  readonly name: string;
  /** The log and topic `consume` reads: the groups of earlier generations are deleted there. */
  readonly log: EventLog;
  readonly topic: string;
  readonly logger: Logger;
  readonly consume: (group: string) => Promise<LogConsumer>;
  /** Empties the projection's tables, in the rebuild's transaction. */
  readonly reset: (tx: Transaction) => Promise<void>;
  readonly afterReset?: () => Promise<void>;
}): Promise<GenerationalProjection> => {
  const { db, schema, name } = options;
  const generations = `${quoteIdent(schema)}.projection_generations`;
  const appliedEvents = `${quoteIdent(schema)}.projection_applied_events`;
  const offsets = `${quoteIdent(schema)}.projection_offsets`;

  /**
   * Deletes the consumer groups of the generations before `current` from the log (docs/operations.md,
   * "Rebuilding a projection"): nothing consumes them any more, and the log would keep their offsets, rows or
   * broker-side consumers for ever. The log's tables are not the catalog's (the EventLog port owns them, and on
   * NATS or Kafka part of a group lives in the broker), so this cannot join the switch's transaction; it runs
   * right after it and again at every start, so a crash in between, or a rebuild done by hand, leaves nothing.
   * Deleting a group twice is no error. A failure is logged: the next start tries again.
   */
  const deleteEarlierGroups = async (current: number): Promise<void> => {
    for (let earlier = 1; earlier < current; earlier++) {
      const group = generationGroup(name, earlier);
      await options.log.deleteGroup(options.topic, group).catch((error: unknown) => {
        options.logger.warn(
          { err: error, topic: options.topic, group },
          'the consumer group of an earlier generation was not deleted; the next start tries again',
        );
      });
    }
  };

  const { rows } = await db.query<{ generation: number }>(
    `select generation from ${generations} where projection = $1`,
    [name],
  );
  const started = rows[0]?.generation ?? 1;
  let group = generationGroup(name, started);
  await deleteEarlierGroups(started);
  let consumer: LogConsumer | undefined = await options.consume(group);
  let rebuilding: Promise<void> | undefined;

  const rebuild = async (): Promise<void> => {
    const previous = group;
    await consumer?.close();
    consumer = undefined;
    const generation = await db.transaction(async (tx) => {
      await options.reset(tx);
      await tx.query(`delete from ${appliedEvents} where projection = $1`, [previous]);
      await tx.query(`delete from ${offsets} where projection = $1`, [previous]);
      const bumped = await tx.query<{ generation: number }>(
        `insert into ${generations} (projection, generation) values ($1, 2)
         on conflict (projection) do update set generation = ${generations}.generation + 1
         returning generation`,
        [name],
      );
      return bumped.rows[0]!.generation;
    });
    await deleteEarlierGroups(generation);
    await options.afterReset?.();
    group = generationGroup(name, generation);
    consumer = await options.consume(group);
  };

  return {
    isRunning: () => consumer !== undefined,
    group: () => group,
    rebuild: () => (rebuilding ??= rebuild().finally(() => (rebuilding = undefined))),
    stop: async () => {
      await rebuilding?.catch(() => undefined);
      await consumer?.close();
      consumer = undefined;
    },
  };
};
