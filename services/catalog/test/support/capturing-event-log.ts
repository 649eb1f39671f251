import type { DeliveredMessage, EventLog, ConsumeOptions } from '@marketplace/eventlog';

/**
 * An EventLog double for projection tests: it records consumers and lets the test deliver messages to the
 * open one by hand, so a test decides exactly what arrives, how often and in which order.
 */
export interface CapturingEventLog extends EventLog {
  /** Every consume call, in order, with whether it was closed since. */
  readonly consumers: { readonly options: ConsumeOptions; closed: boolean }[];
  /** Every group deleted (`deleteGroup`), as `<topic> <group>`, in order. */
  readonly deletedGroups: string[];
  /**
   * Hands the messages, as one batch of the first one's partition, to the handler of the open consumer of
   * their topic, as the log would; resolves when it was handled.
   */
  deliver(...messages: [DeliveredMessage, ...DeliveredMessage[]]): Promise<void>;
}

export const capturingEventLog = (): CapturingEventLog => {
  const consumers: { options: ConsumeOptions; closed: boolean }[] = [];
  const deletedGroups: string[] = [];
  return {
    consumers,
    deletedGroups,
    async publish() {
      throw new Error('the catalog never publishes');
    },
    async consume(options) {
      const consumer = { options, closed: false };
      consumers.push(consumer);
      return {
        close: async () => {
          consumer.closed = true;
        },
      };
    },
    async follow() {
      throw new Error('the catalog never follows');
    },
    async deleteGroup(topic, group) {
      if (
        consumers.some(({ options, closed }) => !closed && options.topic === topic && options.group === group)
      )
        throw new Error(`the group ${group} still consumes ${topic}`);
      deletedGroups.push(`${topic} ${group}`);
    },
    async deliver(...messages) {
      const [message] = messages;
      const open = consumers.filter(
        (consumer) => !consumer.closed && consumer.options.topic === message.topic,
      );
      if (open.length !== 1) {
        throw new Error(`expected one open consumer of ${message.topic}, found ${open.length}`);
      }
      await open[0]!.options.handler({ topic: message.topic, partition: message.partition, messages });
    },
    async close() {
      for (const consumer of consumers) consumer.closed = true;
    },
  };
};
