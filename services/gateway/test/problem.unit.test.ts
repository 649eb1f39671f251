import { describe, expect, it } from '@jest/globals';
import type { ErrorKind } from '@marketplace/platform';
import { AppError, httpStatusOf, validationError } from '@marketplace/platform';
import { HttpProblem, PROBLEM_TYPES, Problems } from '../src/http/problem.js';

const problems = new Problems('https://market.test');

/** What body-parser and Express raise (http-errors): a status, and for the body parser a type. */
const httpError = (status: number, type?: string, message = 'boom'): Error =>
  Object.assign(new Error(message), { status, statusCode: status, expose: true, ...(type ? { type } : {}) });

describe('problem documents', () => {
  it('give every AppError kind the status of httpStatusOf and a resolvable type', () => {
    for (const kind of Object.keys(httpStatusOf) as ErrorKind[]) {
      const problem = problems.fromError(new AppError(kind, `a ${kind} failure`));
      expect(problem).toMatchObject({ status: httpStatusOf[kind], detail: `a ${kind} failure` });
      expect(problem?.type).toMatch(/^https:\/\/market\.test\/problems\/[a-z-]+$/);
    }
  });

  it('carry field violations as errors, and leave errors out when there are none', () => {
    const problem = problems.fromError(
      validationError('bad', [{ path: 'price', message: 'must be a number' }]),
    );
    expect(problem).toEqual({
      type: 'https://market.test/problems/validation-error',
      title: PROBLEM_TYPES['validation-error'].title,
      status: 400,
      detail: 'bad',
      errors: [{ path: 'price', message: 'must be a number' }],
    });
    expect(problems.fromError(validationError('bad'))).not.toHaveProperty('errors');
  });

  it('map body-parser failures to 400 malformed JSON, 413 and 415', () => {
    expect(problems.fromError(httpError(400, 'entity.parse.failed'))).toMatchObject({
      status: 400,
      type: 'https://market.test/problems/malformed-json',
    });
    expect(problems.fromError(httpError(413, 'entity.too.large'))?.status).toBe(413);
    expect(problems.fromError(httpError(415, 'charset.unsupported'))?.status).toBe(415);
    expect(problems.fromError(httpError(415, 'encoding.unsupported'))?.status).toBe(415);
  });

  it('keep the status of other client errors under about:blank with the status phrase as title', () => {
    expect(problems.fromError(httpError(400, undefined, "Failed to decode param '%zz'"))).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: "Failed to decode param '%zz'",
    });
  });

  it('map edge-only problems by their slug', () => {
    expect(problems.fromError(new HttpProblem('unsupported-media-type', 'send JSON'))).toMatchObject({
      status: 415,
      detail: 'send JSON',
    });
  });

  it('leave real faults unmapped, so they become a bare 500', () => {
    expect(problems.fromError(new Error('db down'))).toBeUndefined();
    expect(problems.fromError(httpError(500))).toBeUndefined();
    expect(problems.fromError('a string')).toBeUndefined();
    expect(problems.fromError(null)).toBeUndefined();
  });
});
