export * from './database.port.js';
export * from './postgres.adapter.js';
export * from './pglite.adapter.js';
export * from './wait-for-database.js';
export * from './migrate.js';
export * from './after-commit.js';
