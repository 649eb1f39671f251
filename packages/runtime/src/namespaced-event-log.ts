import type { ConsumeOptions, EventLog } from '@marketplace/eventlog';

/**
 * Prefixes every topic with a namespace, so several marketplaces (or test runs) can share one broker without
 * seeing each other's messages. Handlers still receive the topic as published by the service.
 */
export const namespacedEventLog = (log: EventLog, namespace: string): EventLog => {
  if (namespace === '') return log;
  const physical = (topic: string): string => `${namespace}.${topic}`;
  const logical =
    (topic: string, handler: ConsumeOptions['handler']): ConsumeOptions['handler'] =>
    (batch) =>
      handler({ ...batch, topic, messages: batch.messages.map((message) => ({ ...message, topic })) });
  return {
    publish: (topic, messages) => log.publish(physical(topic), messages),
    consume: (options) =>
      log.consume({
        ...options,
        topic: physical(options.topic),
        handler: logical(options.topic, options.handler),
      }),
    follow: (options) =>
      log.follow({
        ...options,
        topic: physical(options.topic),
        handler: logical(options.topic, options.handler),
      }),
    deleteGroup: (topic, group) => log.deleteGroup(physical(topic), group),
    close: () => log.close(),
  };
};
