/**
 * In-process wake-ups of the outbox relays: the event store rings its schema once an append has committed, and
 * the relay of that schema in this process reads at once. It replaces a NOTIFY from the append trigger, which
 * put PostgreSQL's global notification lock in every commit's path (docs/architecture.md, "How work moves").
 * A relay in another process (another replica leads, or the CLI appended) finds the events by polling.
 */
const listeners = new Map<string, Set<() => void>>();

/** Calls `listener` after each committed append to `schema`'s event store in this process; returns the stop. */
export const onEventsAppended = (schema: string, listener: () => void): (() => void) => {
  const forSchema = listeners.get(schema) ?? new Set();
  forSchema.add(listener);
  listeners.set(schema, forSchema);
  return () => {
    forSchema.delete(listener);
    if (forSchema.size === 0) listeners.delete(schema);
  };
};

/** Rings every listener of `schema`. */
export const eventsAppended = (schema: string): void => {
  for (const listener of listeners.get(schema) ?? []) listener();
};
