import { expect } from '@jest/globals';

/**
 * The 422 every creating REST route answers for a key used before with another request (docs/idempotency.md,
 * "The rules"): a problem document with its code, and the key echoed.
 */
export const expectIdempotencyConflict = (
  answer: { readonly status: number; readonly headers: Headers; readonly body: unknown },
  key: string,
): void => {
  expect(answer.status).toBe(422);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({
    type: expect.stringMatching(/\/problems\/idempotency-conflict$/),
    status: 422,
    code: 'idempotency_conflict',
    detail: expect.stringContaining(`idempotency key "${key}" was already used for a different request`),
  });
  expect(answer.headers.get('idempotency-key')).toBe(key);
};
