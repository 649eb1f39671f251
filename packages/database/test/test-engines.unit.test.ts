import { afterEach, describe, expect, it } from '@jest/globals';
import { contractTestEngines, testEngines } from '../src/testing/index.js';

const names = (engines: { name: string }[]): string[] => engines.map((engine) => engine.name);

describe('test engines', () => {
  const chosen = process.env['TEST_ENGINES'];
  afterEach(() => {
    if (chosen === undefined) delete process.env['TEST_ENGINES'];
    else process.env['TEST_ENGINES'] = chosen;
  });

  it('runs integration suites on PostgreSQL alone unless TEST_ENGINES names others', () => {
    delete process.env['TEST_ENGINES'];
    expect(names(testEngines())).toEqual(['postgres']);
    process.env['TEST_ENGINES'] = 'postgres, pglite';
    expect(names(testEngines())).toEqual(['postgres', 'pglite']);
    process.env['TEST_ENGINES'] = 'pglite';
    expect(names(testEngines())).toEqual(['pglite']);
  });

  it('refuses an engine it does not know, naming it', () => {
    process.env['TEST_ENGINES'] = 'postgres,mysql';
    expect(() => testEngines()).toThrow('TEST_ENGINES: unknown engine "mysql"');
  });

  it('runs contract suites on both engines whatever TEST_ENGINES says', () => {
    process.env['TEST_ENGINES'] = 'postgres';
    expect(names(contractTestEngines())).toEqual(['postgres', 'pglite']);
  });
});
