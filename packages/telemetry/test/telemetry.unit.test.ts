import { describe, expect, it } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import type { EventLog, LogMessage } from '@marketplace/eventlog';
import { startTelemetry, telemetryEnabled, tracedEventLog } from '../src/index.js';

describe('telemetryEnabled', () => {
  it('is off without an endpoint, so tests and laptops export nothing', () => {
    expect(telemetryEnabled({})).toBe(false);
    expect(telemetryEnabled({ OTEL_SERVICE_NAME: 'listing' })).toBe(false);
  });

  it('is on with an OTLP endpoint or OTEL_SDK_DISABLED=false; OTEL_SDK_DISABLED=true always wins', () => {
    expect(telemetryEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(telemetryEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(
      true,
    );
    expect(telemetryEnabled({ OTEL_SDK_DISABLED: 'false' })).toBe(true);
    expect(
      telemetryEnabled({ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }),
    ).toBe(false);
  });
});

describe('with the SDK off', () => {
  it('starts nothing and leaves messages untouched', async () => {
    const telemetry = startTelemetry({ serviceName: 'test' });
    expect(telemetry.enabled).toBe(false);
    await telemetry.shutdown();
    const published: LogMessage[] = [];
    const log: EventLog = {
      publish: async (_topic, messages) => {
        published.push(...messages);
      },
      consume: async () => ({ close: async () => undefined }),
      follow: async () => ({ close: async () => undefined }),
      deleteGroup: async () => undefined,
      close: async () => undefined,
    };
    const message = {
      key: 'k',
      value: new Uint8Array(),
      headers: { ce_id: 'e', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    };
    await tracedEventLog(log).publish('t', [message]);
    expect(published).toEqual([message]);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
