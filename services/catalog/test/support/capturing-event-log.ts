import type { DeliveredMessage, EventLog, ConsumeOptions } from '@marketplace/eventlog';

/**
 * An EventLog double for projection tests: it records subscriptions and lets the test deliver messages to the
 * open one by hand, so a test decides exactly what arrives, how often and in which order.
 */
export interface CapturingEventLog extends EventLog {
  /** Every subscribe call, in order, with whether it was closed since. */
  readonly subscriptions: { readonly options: ConsumeOptions; closed: boolean }[];
  /**
   * Hands the messages, as one batch of the first one's partition, to the handler of the open subscription to
   * their topic, as the log would; resolves when it was handled.
   */
  deliver(...messages: [DeliveredMessage, ...DeliveredMessage[]]): Promise<void>;
}

export const capturingEventLog = (): CapturingEventLog => {
  const subscriptions: { options: ConsumeOptions; closed: boolean }[] = [];
  return {
    subscriptions,
    async publish() {
      throw new Error('the catalog never publishes');
    },
    async consume(options) {
      const subscription = { options, closed: false };
      subscriptions.push(subscription);
      return {
        close: async () => {
          subscription.closed = true;
        },
      };
    },
    async deliver(...messages) {
      const [message] = messages;
      const open = subscriptions.filter(
        (subscription) => !subscription.closed && subscription.options.topic === message.topic,
      );
      if (open.length !== 1) {
        throw new Error(`expected one open subscription to ${message.topic}, found ${open.length}`);
      }
      await open[0]!.options.handler({ topic: message.topic, partition: message.partition, messages });
    },
    async close() {
      for (const subscription of subscriptions) subscription.closed = true;
    },
  };
};
