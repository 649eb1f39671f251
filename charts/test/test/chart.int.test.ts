import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { IContainer } from 'kubernetes-models/v1';
import { ciValuesFiles, renderChart, renderNotes, rendererBinary, type K8sObject } from '../src/render.js';
import { podSpecOf, probeProblems, schemaProblems, securityProblems } from '../src/workload-checks.js';

const GRPC_SERVICES = ['listing', 'catalog', 'quote', 'order', 'subscription'];
const ALL_COMPONENTS = ['gateway', ...GRPC_SERVICES];

const ofKind = (objects: readonly K8sObject[], kind: string): K8sObject[] =>
  objects.filter((object) => object.kind === kind);
const named = (objects: readonly K8sObject[], kind: string, name: string): K8sObject | undefined =>
  objects.find((object) => object.kind === kind && object.metadata.name === name);
const containerOf = (workload: K8sObject): IContainer => podSpecOf(workload).containers[0]!;
const spec = (object: K8sObject | undefined): Record<string, unknown> =>
  (object?.['spec'] ?? {}) as Record<string, unknown>;

const renders = new Map<string, K8sObject[]>();

beforeAll(() => {
  rendererBinary();
  for (const file of ciValuesFiles()) renders.set(basename(file), renderChart({ valuesFiles: [file] }));
}, 120_000);

describe.each(ciValuesFiles().map((file) => basename(file)))('ci/%s', (ciFile) => {
  const objects = (): K8sObject[] => renders.get(ciFile)!;

  it('renders objects that validate against the Kubernetes schemas, names unique per kind', () => {
    expect(objects().length).toBeGreaterThan(0);
    expect(objects().flatMap(schemaProblems)).toEqual([]);
    const keys = objects().map((object) => `${object.kind}/${object.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(ofKind(objects(), 'Secret')).toEqual([]);
  });

  it('hardens every workload (Deployments and migrations Jobs)', () => {
    const workloads = [...ofKind(objects(), 'Deployment'), ...ofKind(objects(), 'Job')];
    expect(workloads.length).toBeGreaterThan(0);
    expect(workloads.flatMap(securityProblems)).toEqual([]);
  });

  it('gives every workload the key of the services’ calls to each other, from the Secret', () => {
    const workloads = [...ofKind(objects(), 'Deployment'), ...ofKind(objects(), 'Job')];
    const internalAuthKeyOf = (workload: K8sObject) =>
      (containerOf(workload).env ?? []).find((variable) => variable.name === 'INTERNAL_AUTH_KEY')?.valueFrom;
    for (const workload of workloads) {
      expect({ workload: workload.metadata.name, from: internalAuthKeyOf(workload) }).toEqual({
        workload: workload.metadata.name,
        from: { secretKeyRef: { name: expect.any(String), key: 'INTERNAL_AUTH_KEY' } },
      });
    }
  });

  it('probes every Deployment: gRPC health for services, /healthz and /readyz for the gateway', () => {
    const deployments = ofKind(objects(), 'Deployment');
    expect(deployments.flatMap(probeProblems)).toEqual([]);
  });

  it('gives every Deployment its ServiceAccount, ConfigMap, Service, and a grace period longer than its drain', () => {
    for (const deployment of ofKind(objects(), 'Deployment')) {
      const { name } = deployment.metadata;
      const pod = podSpecOf(deployment);
      expect(pod.serviceAccountName).toBe(name);
      expect(named(objects(), 'ServiceAccount', name)).toBeDefined();
      const configMap = named(objects(), 'ConfigMap', name);
      const env = (configMap?.['data'] ?? {}) as Record<string, string>;
      expect(containerOf(deployment).envFrom).toEqual([{ configMapRef: { name } }]);
      expect(named(objects(), 'Service', name)).toBeDefined();
      const drainSeconds = Number(env['SHUTDOWN_TIMEOUT_MS']) / 1000;
      const preStop = Number(containerOf(deployment).lifecycle?.preStop?.exec?.command?.[1]);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(drainSeconds + preStop);
      expect(spec(deployment)['strategy']).toEqual({
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
      });
    }
  });
});

describe('the default values', () => {
  const objects = (): K8sObject[] => renders.get('default-values.yaml')!;

  it('renders every component with an HPA, a PodDisruptionBudget, a NetworkPolicy and a migrations Job', () => {
    for (const component of ALL_COMPONENTS) {
      const name = `marketplace-${component}`;
      for (const kind of ['Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'NetworkPolicy'])
        expect(named(objects(), kind, name)).toBeDefined();
      expect(named(objects(), 'Job', `${name}-migrate`)).toBeDefined();
    }
  });

  it('lets only the gateway take ingress from outside; a service accepts only the components that call it', () => {
    const ingressOf = (component: string) =>
      spec(named(objects(), 'NetworkPolicy', `marketplace-${component}`))['ingress'] as {
        from?: { podSelector?: { matchLabels: Record<string, string> } }[];
      }[];
    const gateway = ingressOf('gateway');
    expect(gateway).toHaveLength(1);
    expect(gateway[0]!.from).toBeUndefined();
    // Checkout in the order service reads and reserves listings and reads quotes.
    const callersOf = (service: string) =>
      service === 'listing' || service === 'quote' ? ['gateway', 'order'] : ['gateway'];
    for (const service of GRPC_SERVICES) {
      const rules = ingressOf(service);
      expect(rules).toHaveLength(1);
      expect(rules[0]!.from).toEqual(
        callersOf(service).map((caller) => ({
          podSelector: {
            matchLabels: { 'app.kubernetes.io/name': caller, 'app.kubernetes.io/instance': 'marketplace' },
          },
        })),
      );
    }
    const ingress = ofKind(objects(), 'Ingress');
    expect(ingress.map((object) => object.metadata.name)).toEqual(['marketplace-gateway']);
  });

  it('runs migrations as a pre-install and pre-upgrade hook, in migrate-only mode, with the same secrets', () => {
    const job = named(objects(), 'Job', 'marketplace-listing-migrate')!;
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    const env = containerOf(job).env ?? [];
    expect(env).toContainEqual({ name: 'MIGRATE_ONLY', value: 'true' });
    expect(env).toContainEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'marketplace-secrets', key: 'DATABASE_URL' } },
    });
    // Not counted by the component's PodDisruptionBudget or admitted by its NetworkPolicy.
    const jobLabels = (spec(job)['template'] as { metadata: { labels: Record<string, string> } }).metadata
      .labels;
    expect(jobLabels['app.kubernetes.io/name']).toBe('listing-migrate');
  });

  it('gives every gRPC service a headless Service over its pods, which the gateway dials by DNS name', () => {
    for (const service of GRPC_SERVICES) {
      const name = `marketplace-${service}`;
      const headless = named(objects(), 'Service', `${name}-pods`)!;
      expect(spec(headless)).toMatchObject({
        clusterIP: 'None',
        selector: spec(named(objects(), 'Service', name))['selector'],
      });
    }
    expect(named(objects(), 'Service', 'marketplace-gateway-pods')).toBeUndefined();
  });

  it('reads secrets from the named Secret only, and gives the gateway and order their backends by Service name', () => {
    const gateway = named(objects(), 'Deployment', 'marketplace-gateway')!;
    const secretKeys = (containerOf(gateway).env ?? [])
      .filter((variable) => variable.valueFrom?.secretKeyRef)
      .map((variable) => variable.name);
    expect(secretKeys).toEqual([
      'DATABASE_URL',
      'INTERNAL_AUTH_KEY',
      'ADMIN_TOKEN',
      'AGENT_TOKEN_SECRET',
      'SIGNING_KEY_PEM',
    ]);
    const gatewayEnv = named(objects(), 'ConfigMap', 'marketplace-gateway')!['data'] as Record<
      string,
      string
    >;
    expect(gatewayEnv['LISTING_GRPC_ADDR']).toBe('dns:///marketplace-listing-pods.marketplace.svc:50051');
    expect(gatewayEnv['CATALOG_GRPC_ADDR']).toBe('dns:///marketplace-catalog-pods.marketplace.svc:50052');
    expect(gatewayEnv['OTEL_SDK_DISABLED']).toBe('true');
    const orderEnv = named(objects(), 'ConfigMap', 'marketplace-order')!['data'] as Record<string, string>;
    expect(orderEnv['LISTING_GRPC_ADDR']).toBe('dns:///marketplace-listing-pods.marketplace.svc:50051');
    expect(orderEnv['QUOTE_GRPC_ADDR']).toBe('dns:///marketplace-quote-pods.marketplace.svc:50053');
    const subscription = named(objects(), 'Deployment', 'marketplace-subscription')!;
    expect((containerOf(subscription).env ?? []).map((variable) => variable.name)).toEqual(
      expect.arrayContaining(['WEBHOOK_SIGNING_SECRET', 'SIGNING_KEY_PEM']),
    );
  });
});

describe('value sets', () => {
  it('kafka-elasticsearch: Kafka brokers and Elasticsearch reach the right components', () => {
    const objects = renders.get('kafka-elasticsearch-values.yaml')!;
    const catalog = named(objects, 'ConfigMap', 'marketplace-catalog')!['data'] as Record<string, string>;
    expect(catalog).toMatchObject({
      EVENT_LOG: 'kafka',
      KAFKA_BROKERS: 'kafka-0.kafka.kafka.svc:9092,kafka-1.kafka.kafka.svc:9092,kafka-2.kafka.kafka.svc:9092',
      SEARCH_BACKEND: 'elasticsearch',
      ELASTICSEARCH_URL: 'https://elasticsearch.search.svc:9200',
    });
    expect(catalog).not.toHaveProperty('NATS_URL');
  });

  it('a two-replica catalog on each backend: fixed pods on the embedded index, an HPA from 2 on Elasticsearch', () => {
    const embedded = renders.get('catalog-replicas-values.yaml')!;
    expect(spec(named(embedded, 'Deployment', 'marketplace-catalog'))['replicas']).toBe(2);
    expect(named(embedded, 'HorizontalPodAutoscaler', 'marketplace-catalog')).toBeUndefined();
    expect(named(embedded, 'ConfigMap', 'marketplace-catalog')!['data']).toMatchObject({
      SEARCH_BACKEND: 'embedded',
    });
    const elasticsearch = renders.get('kafka-elasticsearch-values.yaml')!;
    expect(spec(named(elasticsearch, 'Deployment', 'marketplace-catalog'))).not.toHaveProperty('replicas');
    expect(spec(named(elasticsearch, 'HorizontalPodAutoscaler', 'marketplace-catalog'))).toMatchObject({
      minReplicas: 2,
      maxReplicas: 10,
    });
  });

  it('nats: OpenTelemetry exports over OTLP, images pinned by digest, the gateway only from the ingress namespace', () => {
    const objects = renders.get('nats-values.yaml')!;
    const listing = named(objects, 'ConfigMap', 'marketplace-listing')!['data'] as Record<string, string>;
    expect(listing).toMatchObject({
      OTEL_SDK_DISABLED: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability.svc:4318',
      OTEL_SERVICE_NAME: 'listing',
      EVENT_LOG_NAMESPACE: 'staging',
    });
    const deployment = named(objects, 'Deployment', 'marketplace-listing')!;
    expect(containerOf(deployment).image).toMatch(/\/listing@sha256:[0-9a-f]{64}$/);
    expect(containerOf(deployment).env).toContainEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'marketplace-secrets', key: 'LISTING_DATABASE_URL' } },
    });
    const gatewayPolicy = spec(named(objects, 'NetworkPolicy', 'marketplace-gateway'));
    expect(JSON.stringify(gatewayPolicy['ingress'])).toContain('ingress-nginx');
  });

  it('minimal: only the enabled components, fixed replicas, no HPA, PDB, Ingress, NetworkPolicy or hook', () => {
    const objects = renders.get('minimal-values.yaml')!;
    expect(ofKind(objects, 'Deployment').map((object) => object.metadata.name)).toEqual([
      'marketplace-catalog',
      'marketplace-gateway',
      'marketplace-listing',
    ]);
    for (const kind of ['HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Ingress', 'NetworkPolicy', 'Job'])
      expect(ofKind(objects, kind)).toEqual([]);
    for (const deployment of ofKind(objects, 'Deployment')) expect(spec(deployment)['replicas']).toBe(1);
  });

  it('refuses to render without what a choice requires, naming the value', () => {
    expect(() => renderChart({ set: ['eventLog.kind=kafka'] })).toThrow(/eventLog.kafka.brokers is required/);
    expect(() => renderChart({ set: ['secrets.existingSecret='] })).toThrow(
      /secrets.existingSecret is required/,
    );
    expect(() => renderChart({ set: ['secrets.internalAuthKey='] })).toThrow(
      /secrets.internalAuthKey is required/,
    );
    expect(() => renderChart({ set: ['components.catalog.search.backend=elasticsearch'] })).toThrow(
      /elasticsearch.url is required/,
    );
  });

  it('NOTES name the durability settings of the broker in use', () => {
    expect(renderNotes()).toMatch(/sync_interval: always/);
    expect(renderNotes({ set: ['eventLog.kind=kafka', 'eventLog.kafka.brokers=k:9092'] })).toMatch(
      /acks=all[\s\S]*min.insync.replicas=2/,
    );
  });
});

describe('the checks fail when a workload loses its protection', () => {
  const deployment = (): K8sObject =>
    structuredClone(named(renders.get('default-values.yaml')!, 'Deployment', 'marketplace-listing')!);

  it('reports a lost probe', () => {
    const broken = deployment();
    delete containerOf(broken).readinessProbe;
    expect(probeProblems(broken)).toEqual([
      'Deployment/marketplace-listing: readiness is not the gRPC health of the server',
    ]);
  });

  it('reports a lost security setting', () => {
    const broken = deployment();
    containerOf(broken).securityContext!.readOnlyRootFilesystem = false;
    podSpecOf(broken).securityContext!.runAsNonRoot = false;
    containerOf(broken).env!.push({ name: 'ADMIN_TOKEN', value: 'plain' });
    expect(securityProblems(broken)).toEqual([
      'Deployment/marketplace-listing: pod runAsNonRoot is not true',
      'Deployment/marketplace-listing container listing: root filesystem is writable',
      'Deployment/marketplace-listing container listing: ADMIN_TOKEN is not read from a Secret',
    ]);
  });

  it('reports an object the Kubernetes schema refuses', () => {
    const broken = deployment();
    (containerOf(broken) as unknown as { ports: unknown }).ports = 'grpc';
    expect(schemaProblems(broken)).toHaveLength(1);
  });
});
