import { createRequire } from 'node:module';
import { Client } from '@elastic/elasticsearch';
import type { BaseConnection, errors } from '@elastic/elasticsearch';
import type { MockPattern } from '@elastic/elasticsearch-mock';

// The mock is CommonJS and recognises errors of the client's CommonJS build (its own `require`); the ESM build's
// classes are distinct (the dual-package hazard), so the test takes both from the CommonJS side.
const require = createRequire(import.meta.url);
// Its typings declare an ES default export the CommonJS module does not have: typed here by what the test uses.
const Mock = require('@elastic/elasticsearch-mock') as new () => {
  add(pattern: MockPattern, resolver: (params: MockPattern) => Record<string, unknown> | string): void;
  getConnection(): typeof BaseConnection;
};
export const { ResponseError } = (require('@elastic/elasticsearch') as { errors: typeof errors }).errors;

/**
 * A client whose HTTP layer is the mock (`@elastic/elasticsearch-mock`, the official one: it answers what a test
 * adds, it does not search), with the template and the first generation of `alias` answered; every request it
 * receives is recorded.
 */
export const mockedCluster = (alias: string) => {
  const mock = new Mock();
  const requests: MockPattern[] = [];
  const record =
    (answer: (params: MockPattern) => Record<string, unknown> | errors.ResponseError) =>
    (params: MockPattern) => {
      requests.push(params);
      return answer(params) as Record<string, unknown>;
    };
  mock.add(
    { method: 'PUT', path: `/_index_template/${alias}` },
    record(() => ({ acknowledged: true })),
  );
  mock.add(
    { method: 'HEAD', path: `/_alias/${alias}` },
    record(
      () =>
        new ResponseError({
          body: {},
          statusCode: 404,
          headers: {},
          warnings: null,
          meta: {} as never,
        }),
    ),
  );
  mock.add(
    { method: 'PUT', path: `/${alias}-1` },
    record(() => ({ acknowledged: true, index: `${alias}-1` })),
  );
  const client = new Client({ node: 'http://es.test:9200', Connection: mock.getConnection() });
  return { mock, client, requests };
};

export const conflict = () =>
  new ResponseError({
    body: { error: { type: 'version_conflict_engine_exception' } },
    statusCode: 409,
    headers: {},
    warnings: null,
    meta: {} as never,
  });
