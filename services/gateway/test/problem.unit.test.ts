import { describe, expect, it } from '@jest/globals';
import type { ErrorKind } from '@marketplace/platform';
import { AppError, httpStatusOf, validationError } from '@marketplace/platform';
import type { Response } from 'express';
import { HttpProblem, PROBLEM_TYPES, Problems, sendProblem } from '../src/edge/http/problem.js';

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

  it('carry the machine-readable code of an idempotency conflict with its 422', () => {
    expect(problems.fromError(new AppError('idempotency_conflict', 'key reused'))).toEqual({
      type: 'https://market.test/problems/idempotency-conflict',
      title: PROBLEM_TYPES['idempotency-conflict'].title,
      status: 422,
      detail: 'key reused',
      code: 'idempotency_conflict',
    });
    expect(problems.fromError(new AppError('conflict', 'moved on'))).not.toHaveProperty('code');
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

  it('answer a path parameter the router cannot percent-decode as 404: the address names no resource', () => {
    const undecodable = Object.assign(new URIError("Failed to decode param 'F%ED%BA%A5'"), {
      status: 400,
      statusCode: 400,
    });
    expect(problems.fromError(undecodable)).toMatchObject({
      type: 'https://market.test/problems/not-found',
      status: 404,
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

describe('sendProblem', () => {
  /** The part of Express's Response that sendProblem uses, recording what was sent. */
  const fakeResponse = (headers: Record<string, string> = {}) => {
    const sent = { status: 0, headers, body: '' };
    const res = {
      get: (name: string) => headers[name],
      set: (name: string, value: string) => ((headers[name] = value), res),
      status: (status: number) => ((sent.status = status), res),
      type: (type: string) => ((headers['Content-Type'] = type), res),
      send: (body: string) => ((sent.body = body), res),
    };
    return { res: res as unknown as Response, sent };
  };

  it('asks a client to retry a 503 after Retry-After seconds, with the problem document', () => {
    const { res, sent } = fakeResponse();
    sendProblem(res, problems.fromError(new AppError('unavailable', 'the database connection was lost'))!);
    expect(sent).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    expect(JSON.parse(sent.body)).toMatchObject({ status: 503, title: 'Service unavailable' });
  });

  it("keeps a route's own Retry-After, and sets none on other statuses", () => {
    const own = fakeResponse({ 'Retry-After': '30' });
    sendProblem(own.res, problems.of('service-unavailable'));
    expect(own.sent.headers['Retry-After']).toBe('30');
    const other = fakeResponse();
    sendProblem(other.res, problems.of('internal-error'));
    expect(other.sent.headers).not.toHaveProperty('Retry-After');
  });
});
