import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../src/logger.js';

/** A database error as PGlite and node-postgres report one: the statement's values ride along. */
const databaseError = (): Error =>
  Object.assign(new Error('duplicate key value violates unique constraint "accounts_email"'), {
    code: '23505',
    query: 'INSERT INTO identity.accounts (name, email) VALUES ($1, $2)',
    params: ['Ada Lovelace', 'ada@example.com'],
    detail: 'Key (email)=(ada@example.com) already exists.',
    where: "PL/pgSQL function f() line 3 at SQL statement with 'Dear Ada, your message'",
  });

describe('the logger', () => {
  it('logs a database error without the data of its statement', () => {
    const lines: string[] = [];
    const logger = createLogger({
      service: 'test',
      level: 'info',
      destination: { write: (line: string) => lines.push(line) },
    });
    logger.error({ err: databaseError() }, 'unexpected error');
    logger.error({ err: new Error('wrapped', { cause: databaseError() }) }, 'unexpected error');
    const text = lines.join('');
    expect(text).not.toContain('ada@example.com');
    expect(text).not.toContain('Ada Lovelace');
    expect(text).not.toContain('Dear Ada');
    // What an operator needs stays: the message, the code and the statement's text.
    expect(text).toContain('duplicate key value violates unique constraint');
    expect(text).toContain('23505');
    expect(text).toContain('INSERT INTO identity.accounts');
  });
});
