import { partitionOf, type LogMessage } from './eventlog.port.js';

/** Groups messages by the partition of their key, keeping their order within each partition. */
export const groupByPartition = (
  messages: readonly LogMessage[],
  partitions: number,
): Map<number, LogMessage[]> => {
  const groups = new Map<number, LogMessage[]>();
  for (const message of messages) {
    const partition = partitionOf(message.key, partitions);
    const group = groups.get(partition);
    if (group) group.push(message);
    else groups.set(partition, [message]);
  }
  return groups;
};
