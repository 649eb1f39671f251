import { describe, expect, it } from '@jest/globals';
import { isolationClause } from '../src/isolation.js';
import { AdvisoryLockTimeoutError, isConnectionFailure, quoteIdent, sqlStateOf } from '../src/index.js';
import { freshSchemaName } from '../src/testing/index.js';
import { createTransactionScope } from '../src/transaction-scope.js';

describe('quoteIdent', () => {
  it('quotes lower-case identifiers and refuses anything that could break out of quotes', () => {
    expect(quoteIdent('listing_v1')).toBe('"listing_v1"');
    for (const bad of ['', 'Upper', 'a"b', 'semi;colon', '1starts_with_digit', 'x'.repeat(64)]) {
      expect(() => quoteIdent(bad)).toThrow('invalid SQL identifier');
    }
  });
});

describe('sqlStateOf', () => {
  it('reads the code of either driver error, and nothing from other values', () => {
    expect(sqlStateOf(Object.assign(new Error('dup'), { code: '23505' }))).toBe('23505');
    expect(sqlStateOf(new Error('plain'))).toBeUndefined();
    expect(sqlStateOf({ code: 23505 })).toBeUndefined();
    expect(sqlStateOf(null)).toBeUndefined();
  });
});

describe('isConnectionFailure', () => {
  const withCode = (code: string): Error => Object.assign(new Error('driver error'), { code });

  it('recognises a lost or refused connection, whether PostgreSQL, the socket or node-postgres says so', () => {
    for (const code of ['08006', '08003', '57P01', '57P02', '57P03', '53300', 'ECONNRESET', 'ECONNREFUSED']) {
      expect([code, isConnectionFailure(withCode(code))]).toEqual([code, true]);
    }
    expect(isConnectionFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionFailure(new Error('timeout exceeded when trying to connect'))).toBe(true);
  });

  it('leaves SQL errors and anything else alone', () => {
    for (const code of ['23505', '40001', '57014', '42P01', '28P01']) {
      expect([code, isConnectionFailure(withCode(code))]).toEqual([code, false]);
    }
    expect(isConnectionFailure(new Error('boom'))).toBe(false);
    expect(isConnectionFailure(undefined)).toBe(false);
  });
});

describe('isolationClause', () => {
  it('spells each level in SQL and refuses anything else', () => {
    expect(isolationClause('read committed')).toBe('ISOLATION LEVEL READ COMMITTED');
    expect(isolationClause('serializable')).toBe('ISOLATION LEVEL SERIALIZABLE');
    expect(() => isolationClause('serializable; drop table x' as 'serializable')).toThrow(
      'unknown isolation level',
    );
  });
});

describe('AdvisoryLockTimeoutError', () => {
  it('names the key and the time waited', () => {
    const error = new AdvisoryLockTimeoutError('migrate:listing', 300);
    expect(error.message).toBe('timed out after 300 ms waiting for advisory lock "migrate:listing"');
    expect(error).toMatchObject({ key: 'migrate:listing', timeoutMs: 300, name: 'AdvisoryLockTimeoutError' });
  });
});

describe('freshSchemaName', () => {
  it('makes distinct valid identifiers with the prefix', () => {
    const names = new Set(Array.from({ length: 100 }, () => freshSchemaName('listing_test')));
    expect(names.size).toBe(100);
    for (const name of names) {
      expect(name.startsWith('listing_test_')).toBe(true);
      expect(quoteIdent(name)).toBe(`"${name}"`);
    }
  });

  it('refuses a prefix that would not make a valid identifier', () => {
    expect(() => freshSchemaName('Bad-Prefix')).toThrow('lower-case identifier');
    expect(() => freshSchemaName('x'.repeat(42))).toThrow('at most 41');
  });
});

describe('transaction scope', () => {
  it('refuses the database handle inside a transaction, and only while it is open', async () => {
    const scope = createTransactionScope();
    let afterwards: Promise<void> | undefined;
    await scope.run(async () => {
      expect(() => scope.assertOutside('query')).toThrow('query on the database handle inside a transaction');
      // Work started inside the transaction that runs after it ended may use the database again.
      afterwards = new Promise<void>((resolve) => setTimeout(resolve, 10)).then(() =>
        scope.assertOutside('query'),
      );
    });
    expect(() => scope.assertOutside('query')).not.toThrow();
    await expect(afterwards).resolves.toBeUndefined();
  });

  it('keeps separate databases apart', async () => {
    const mine = createTransactionScope();
    const other = createTransactionScope();
    await mine.run(async () => {
      expect(() => other.assertOutside('query')).not.toThrow();
    });
  });
});
