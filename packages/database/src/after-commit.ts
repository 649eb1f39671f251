import type { Database } from './database.port.js';

/**
 * `db` whose every committed transaction is followed by `afterCommit()`: how a writer that cannot see its own
 * commit (a projection run by `startProjection`) wakes the worker that reads what it wrote, which must not look
 * before the commit. A rolled-back transaction calls nothing.
 */
export const afterEachCommit = (db: Database, afterCommit: () => void): Database => ({
  engine: db.engine,
  query: (sql, params) => db.query(sql, params),
  transaction: async (work, options) => {
    const result = await db.transaction(work, options);
    afterCommit();
    return result;
  },
  listen: (channel, onNotify) => db.listen(channel, onNotify),
  withAdvisoryLock: (key, work, options) => db.withAdvisoryLock(key, work, options),
  close: () => db.close(),
});
