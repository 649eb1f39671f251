import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { IContainer, IPodSpec, IProbe } from 'kubernetes-models/v1';
import type { K8sObject } from './render.js';

type ModelClass = new (data: never) => { validate(): void };

/** The kinds the chart renders, by `apiVersion/kind`; anything else is a mistake the tests report. */
const MODELS: Readonly<Record<string, ModelClass>> = {
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
  'batch/v1/Job': Job,
};

const nameOf = (object: K8sObject): string => `${object.kind}/${object.metadata?.name ?? '?'}`;

/** Validates an object against the Kubernetes OpenAPI schema of its kind; returns the problems found. */
export const schemaProblems = (object: K8sObject): string[] => {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!model) return [`${nameOf(object)}: unexpected kind ${object.apiVersion}/${object.kind}`];
  try {
    new model(object as never).validate();
    return [];
  } catch (error) {
    return [`${nameOf(object)}: ${(error as Error).message}`];
  }
};

/** Names of variables that carry credentials: they may only come from a Secret. */
const SECRET_VARIABLE = /SECRET|TOKEN|PASSWORD|API_?KEY|ACCESS_?KEY|CREDENTIAL|DATABASE_URL|SMTP_URL/;

export const podSpecOf = (workload: K8sObject): IPodSpec => {
  const spec = workload['spec'] as { template: { spec: IPodSpec } };
  return spec.template.spec;
};

/**
 * The hardening every pod of the chart must keep: non-root with seccomp at pod level; no privilege escalation,
 * a read-only root filesystem, every capability dropped and a writable /tmp emptyDir in each container; no
 * service-account token; secrets only through secretKeyRef.
 */
export const securityProblems = (workload: K8sObject): string[] => {
  const problems: string[] = [];
  const at = nameOf(workload);
  const pod = podSpecOf(workload);
  const podContext = pod.securityContext ?? {};
  if (podContext.runAsNonRoot !== true) problems.push(`${at}: pod runAsNonRoot is not true`);
  if (!podContext.runAsUser) problems.push(`${at}: pod runAsUser is not a non-zero uid`);
  if (podContext.seccompProfile?.type !== 'RuntimeDefault')
    problems.push(`${at}: pod seccomp is not RuntimeDefault`);
  if (pod.automountServiceAccountToken !== false)
    problems.push(`${at}: the service-account token is mounted`);
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) problems.push(`${at}: uses a host namespace`);
  const tmpVolume = pod.volumes?.find((volume) => volume.name === 'tmp');
  if (!tmpVolume?.emptyDir) problems.push(`${at}: no emptyDir volume named tmp`);
  const containers: IContainer[] = [...(pod.initContainers ?? []), ...pod.containers];
  for (const container of containers) {
    const where = `${at} container ${container.name}`;
    const context = container.securityContext ?? {};
    if (context.allowPrivilegeEscalation !== false)
      problems.push(`${where}: allowPrivilegeEscalation is not false`);
    if (context.privileged === true) problems.push(`${where}: privileged`);
    if (context.readOnlyRootFilesystem !== true) problems.push(`${where}: root filesystem is writable`);
    if (!(context.capabilities?.drop ?? []).includes('ALL'))
      problems.push(`${where}: capabilities not dropped`);
    if ((context.capabilities?.add ?? []).length > 0) problems.push(`${where}: adds capabilities`);
    if (!container.volumeMounts?.some((mount) => mount.name === 'tmp' && mount.mountPath === '/tmp'))
      problems.push(`${where}: /tmp is not the emptyDir`);
    if (!container.resources?.requests?.['memory'] || !container.resources?.limits?.['memory'])
      problems.push(`${where}: no memory request and limit`);
    for (const variable of container.env ?? []) {
      if (SECRET_VARIABLE.test(variable.name) && !variable.valueFrom?.secretKeyRef)
        problems.push(`${where}: ${variable.name} is not read from a Secret`);
    }
  }
  return problems;
};

const hasGrpcCheck = (probe: IProbe | undefined, port: number, service: string): boolean =>
  probe?.grpc?.port === port && (probe.grpc.service ?? '') === service;

const hasHttpCheck = (probe: IProbe | undefined, path: string): boolean =>
  probe?.httpGet?.path === path && probe.httpGet.port === 'http';

/**
 * The probes of a component's Deployment: gRPC services answer grpc.health.v1 (readiness on the overall status,
 * liveness and start-up on the `liveness` entry); the gateway answers /readyz and /healthz.
 */
export const probeProblems = (deployment: K8sObject): string[] => {
  const at = nameOf(deployment);
  const container = podSpecOf(deployment).containers[0];
  if (!container) return [`${at}: no container`];
  const port = container.ports?.[0];
  if (!port) return [`${at}: no container port`];
  const { startupProbe, livenessProbe, readinessProbe } = container;
  const problems: string[] = [];
  if (port.name === 'grpc') {
    if (!hasGrpcCheck(readinessProbe, port.containerPort, ''))
      problems.push(`${at}: readiness is not the gRPC health of the server`);
    if (!hasGrpcCheck(livenessProbe, port.containerPort, 'liveness'))
      problems.push(`${at}: liveness is not the gRPC liveness health entry`);
    if (!hasGrpcCheck(startupProbe, port.containerPort, 'liveness'))
      problems.push(`${at}: no gRPC start-up probe`);
  } else {
    if (!hasHttpCheck(readinessProbe, '/readyz')) problems.push(`${at}: readiness is not GET /readyz`);
    if (!hasHttpCheck(livenessProbe, '/healthz')) problems.push(`${at}: liveness is not GET /healthz`);
    if (!hasHttpCheck(startupProbe, '/healthz')) problems.push(`${at}: no start-up probe on /healthz`);
  }
  return problems;
};
