import type { IsolationLevel } from './database.port.js';

const ISOLATION_LEVELS: ReadonlySet<string> = new Set<IsolationLevel>([
  'read committed',
  'repeatable read',
  'serializable',
]);

/** The SQL clause for an isolation level; refuses anything else, since it is interpolated into SQL. */
export const isolationClause = (isolation: IsolationLevel): string => {
  if (!ISOLATION_LEVELS.has(isolation)) throw new Error(`unknown isolation level: ${String(isolation)}`);
  return `ISOLATION LEVEL ${isolation.toUpperCase()}`;
};
