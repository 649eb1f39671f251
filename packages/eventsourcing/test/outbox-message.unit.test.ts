import { describe, expect, it } from '@jest/globals';
import { cloudEventHeaders, cloudEventTypeOf, toLogMessage, type RecordedEvent } from '../src/index.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const recorded = (overrides: Partial<RecordedEvent> = {}): RecordedEvent => ({
  eventId: '0190a0b8-7c1e-7000-8000-000000000001',
  streamId: 'product_42',
  streamType: 'listing',
  version: 3,
  type: 'ListingCreated',
  data: { name: 'Pallet of kettles' },
  metadata: { actor: { kind: 'seller', id: '7' }, traceparent: TRACEPARENT },
  occurredAt: Date.UTC(2026, 4, 6, 7, 8, 9, 123),
  globalPosition: '17',
  ...overrides,
});

describe('CloudEvents headers of an event on the log', () => {
  it('names the event type after its topic', () => {
    expect(cloudEventTypeOf({ streamType: 'listing', type: 'ListingCreated' })).toBe(
      'marketplace.listing.v1.ListingCreated',
    );
  });

  it('carries the CloudEvents attributes, the content type and the trace context', () => {
    expect(
      cloudEventHeaders(recorded(), { source: '/services/listing', contentType: 'application/protobuf' }),
    ).toEqual({
      ce_specversion: '1.0',
      ce_id: '0190a0b8-7c1e-7000-8000-000000000001',
      ce_type: 'marketplace.listing.v1.ListingCreated',
      ce_source: '/services/listing',
      ce_subject: 'product_42',
      ce_time: '2026-05-06T07:08:09.123Z',
      'content-type': 'application/protobuf',
      traceparent: TRACEPARENT,
    });
  });

  it('leaves the trace context out when the command had none, or a malformed one', () => {
    const options = { source: '/services/listing', contentType: 'application/protobuf' };
    expect(cloudEventHeaders(recorded({ metadata: {} }), options)).not.toHaveProperty('traceparent');
    const forged = recorded({ metadata: { traceparent: `${TRACEPARENT}\r\nx-admin: yes` } });
    expect(cloudEventHeaders(forged, options)).not.toHaveProperty('traceparent');
  });
});

describe('toLogMessage', () => {
  it('keys the message by stream and sends what the encoder produced', () => {
    const payload = new Uint8Array([8, 3]);
    const message = toLogMessage(
      recorded(),
      (event) => ({
        value: event.version === 3 ? payload : new Uint8Array(),
        contentType: 'application/protobuf',
      }),
      '/services/listing',
    );
    expect(message.key).toBe('product_42');
    expect(message.value).toBe(payload);
    expect(message.headers['content-type']).toBe('application/protobuf');
  });

  it("lets the encoder's error through, so the relay retries the batch rather than skipping the event", () => {
    const refuse = () => {
      throw new Error('unknown event type');
    };
    expect(() => toLogMessage(recorded(), refuse, '/services/listing')).toThrow('unknown event type');
  });
});
