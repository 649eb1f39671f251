import { describe, expect, it } from '@jest/globals';
import { accountIdSchema, createAccountBodySchema } from '../src/contexts/identity/admin.schema.js';
import { violationsOf } from '../src/edge/schemas/validate.js';

const valid = { role: 'seller', name: 'Tarnwick Ltd', email: 'ops@tarnwick.test' };

const pathsOf = (body: unknown): string[] => {
  const result = createAccountBodySchema.safeParse(body);
  if (result.success) throw new Error(`accepted ${JSON.stringify(body)}`);
  return violationsOf(result.error).map(({ path }) => path);
};

describe('admin account body', () => {
  it('accepts role, name and email, with optional company and country (upper-cased)', () => {
    expect(createAccountBodySchema.parse({ ...valid, company: 'Tarnwick', country: 'de' })).toEqual({
      ...valid,
      company: 'Tarnwick',
      country: 'DE',
    });
  });

  it.each([
    ['role', 'admin'],
    ['name', '  '],
    ['email', 'not-an-email'],
    ['country', 'XX'],
    ['country', 'USA'],
    ['country', 'UK'],
    ['company', ''],
  ])('rejects %s = %p', (field, value) => {
    expect(pathsOf({ ...valid, [field]: value })).toEqual([field]);
  });

  it('names every missing field and every unknown one', () => {
    expect(pathsOf({ api_key: 'x' }).sort()).toEqual(['api_key', 'email', 'name', 'role']);
  });
});

describe('account id path parameter', () => {
  it('accepts positive integers only', () => {
    expect(accountIdSchema.parse('42')).toBe(42);
    for (const bad of ['0', '-1', '1.5', 'abc', '01', '99999999999999999']) {
      expect(accountIdSchema.safeParse(bad).success).toBe(false);
    }
  });
});
