import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import { basename } from 'node:path';
import { ciValuesFiles } from '../src/render.js';
import { chartValues, mergeValues } from '../src/values.js';
import { valuesSchema } from '../src/values.js';

const validate = new Ajv({ allErrors: true, strict: false }).compile(valuesSchema());

const errorsOf = (values: Record<string, unknown>): string[] =>
  validate(values) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);

describe('values.schema.json', () => {
  it.each(ciValuesFiles().map((file) => [basename(file), file]))(
    'accepts ci/%s over values.yaml',
    (_name, file) => {
      expect(errorsOf(chartValues(file))).toEqual([]);
    },
  );

  const rejected: [string, Record<string, unknown>, RegExp][] = [
    ['a secret as a plain variable', { components: { gateway: { env: { ADMIN_TOKEN: 'x' } } } }, /env/],
    [
      'a database URL as a plain variable',
      { defaults: { env: { DATABASE_URL: 'postgres://u:p@h/db' } } },
      /env/,
    ],
    ['an unknown event log', { eventLog: { kind: 'rabbitmq' } }, /\/eventLog\/kind/],
    [
      'Kafka without brokers',
      { eventLog: { kind: 'kafka', kafka: { brokers: [] } } },
      /\/eventLog\/kafka\/brokers/,
    ],
    ['a privileged port', { components: { listing: { port: 80 } } }, /\/components\/listing\/port/],
    ['a value the chart does not know', { adminToken: 'x' }, /must NOT have additional properties/],
    ['a component the chart does not know', { components: { billing: { enabled: true } } }, /\/components/],
    ['no Secret name', { secrets: { existingSecret: '' } }, /\/secrets\/existingSecret/],
    ['no key for the internal calls', { secrets: { internalAuthKey: '' } }, /\/secrets\/internalAuthKey/],
    ['a mutable-looking tag with a space', { image: { tag: 'latest; rm -rf' } }, /\/image\/tag/],
    ['a short digest', { image: { digest: 'sha256:abc' } }, /\/image\/digest/],
    ['a sample ratio above 1', { observability: { traceSampleRatio: 2 } }, /traceSampleRatio/],
    ['a topic namespace with dots', { eventLog: { namespace: 'a.b' } }, /\/eventLog\/namespace/],
    // Filesystem images are per pod: two gateway or listing pods would each miss the other's files.
    [
      'filesystem images with the default two replicas',
      { blobStore: { kind: 'filesystem' } },
      /\/defaults\/(replicas|autoscaling)/,
    ],
    [
      'filesystem images with two listing pods',
      {
        blobStore: { kind: 'filesystem' },
        defaults: { replicas: 1, autoscaling: { enabled: false } },
        components: { listing: { replicas: 2 } },
      },
      /\/components\/listing\/replicas/,
    ],
    [
      'filesystem images with an autoscaled gateway',
      {
        blobStore: { kind: 'filesystem' },
        defaults: { replicas: 1, autoscaling: { enabled: false } },
        components: { gateway: { autoscaling: { enabled: true } } },
      },
      /\/components\/gateway\/autoscaling/,
    ],
    // Every catalog replica would fail at start without the cluster's address.
    [
      'the Elasticsearch backend without an address',
      { components: { catalog: { search: { backend: 'elasticsearch' } } } },
      /\/elasticsearch/,
    ],
  ];

  it('accepts several catalog replicas with filesystem images, and with the embedded search index', () => {
    const values = mergeValues(chartValues(), {
      blobStore: { kind: 'filesystem' },
      defaults: { replicas: 1, autoscaling: { enabled: false } },
      components: { catalog: { replicas: 3, search: { backend: 'embedded' } } },
    });
    expect(errorsOf(values)).toEqual([]);
  });

  it.each(rejected)('rejects %s', (_what, override, error) => {
    const errors = errorsOf(mergeValues(chartValues(), override));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(error);
  });
});

describe('mergeValues', () => {
  it('merges maps key by key and replaces lists and scalars, as Helm does', () => {
    expect(mergeValues({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: 2 })).toEqual({
      a: { b: 1, c: [3] },
      d: 2,
    });
  });
});
