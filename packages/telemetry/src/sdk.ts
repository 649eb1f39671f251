import { startNodeSdk } from '@opentelemetry/sdk-node';

export interface Telemetry {
  /** False when the SDK was not started (disabled, or nowhere to export to). */
  readonly enabled: boolean;
  /** Flushes what is buffered and stops the exporters; the drain calls it last. */
  shutdown(): Promise<void>;
}

type Env = Record<string, string | undefined>;

/**
 * Whether the SDK starts: `OTEL_SDK_DISABLED=true` always wins; `OTEL_SDK_DISABLED=false` or an OTLP endpoint
 * turns it on. With neither, it stays off, so tests and laptops export nothing and never wait on a collector.
 */
export const telemetryEnabled = (env: Env = process.env): boolean => {
  const disabled = env['OTEL_SDK_DISABLED']?.trim().toLowerCase();
  if (disabled === 'true') return false;
  if (disabled === 'false') return true;
  return Boolean(env['OTEL_EXPORTER_OTLP_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
};

/**
 * Starts the OpenTelemetry Node SDK from the standard `OTEL_*` variables (exporters, endpoint, protocol,
 * sampler, batch delays, resource attributes) with the W3C trace-context propagator. `service.name` is
 * `OTEL_SERVICE_NAME`, else the service's own name. Logs stay on stdout (pino, with trace ids): the OTLP log
 * exporter is off unless `OTEL_LOGS_EXPORTER` asks for it.
 */
export const startTelemetry = ({ serviceName }: { serviceName: string }): Telemetry => {
  const env = process.env;
  if (!telemetryEnabled(env)) return { enabled: false, shutdown: async () => undefined };
  env['OTEL_LOGS_EXPORTER'] ??= 'none';
  const sdk = startNodeSdk({
    resourceAttributes: { 'service.name': env['OTEL_SERVICE_NAME'] ?? serviceName },
  });
  return { enabled: true, shutdown: () => sdk.shutdown() };
};
