import type { EventLog } from '@marketplace/eventlog';

/**
 * Prefixes every topic with a namespace, so several marketplaces (or test runs) can share one broker without
 * seeing each other's messages. Handlers still receive the topic as published by the service.
 */
export const namespacedEventLog = (log: EventLog, namespace: string): EventLog => {
  if (namespace === '') return log;
  const physical = (topic: string): string => `${namespace}.${topic}`;
  return {
    publish: (topic, messages) => log.publish(physical(topic), messages),
    consume: (options) =>
      log.consume({
        ...options,
        topic: physical(options.topic),
        handler: (batch) =>
          options.handler({
            ...batch,
            topic: options.topic,
            messages: batch.messages.map((message) => ({ ...message, topic: options.topic })),
          }),
      }),
    close: () => log.close(),
  };
};
