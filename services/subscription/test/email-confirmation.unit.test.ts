import { describe, expect, it } from '@jest/globals';
import type { RecordedEvent } from '@marketplace/eventsourcing';
import { fold } from '@marketplace/eventsourcing';
import {
  decodeSubscriptionEvent,
  encodeSubscriptionEvent,
} from '../src/adapters/subscription-event.codec.js';
import type { EmailConfirmationCommand, EmailConfirmationEvent } from '../src/domain/email-confirmation.js';
import {
  EMAIL_CONFIRMATION_TTL_MS,
  emailConfirmationDecider,
  mailboxStreamIdOf,
} from '../src/domain/email-confirmation.js';
import { emailConfirmationTokenOf, verifyEmailConfirmationToken } from '../src/domain/webhook-signature.js';

const NOW = Date.UTC(2026, 0, 1);
const MAILBOX = 'ada@example.com';
const KEY = 'test-signing-secret-0123456789abcdef';
const command = (
  type: EmailConfirmationCommand['type'],
  requestId: string,
  now = NOW,
): EmailConfirmationCommand => ({
  type,
  data: { mailbox: MAILBOX, requestId },
  metadata: { now, actor: { kind: 'anonymous', id: '' } },
});
const { decide, evolve, initialState } = emailConfirmationDecider;
const given = (events: EmailConfirmationEvent[]) => fold(emailConfirmationDecider, events);
const requested = (requestId: string, at = NOW): EmailConfirmationEvent => ({
  type: 'EmailConfirmationRequested',
  data: { mailbox: MAILBOX, requestId, requestedAt: at, expiresAt: at + EMAIL_CONFIRMATION_TTL_MS },
});
const confirmed: EmailConfirmationEvent = {
  type: 'EmailAddressConfirmed',
  data: { mailbox: MAILBOX, requestId: 'r1', confirmedAt: NOW + 1 },
};

describe('email confirmation decider (double opt-in)', () => {
  it('asks an unknown mailbox once while its link is usable, again after it expired, never once confirmed', () => {
    expect(decide(command('RequestEmailConfirmation', 'r1'), initialState())).toEqual([requested('r1')]);
    expect(decide(command('RequestEmailConfirmation', 'r2', NOW + 1), given([requested('r1')]))).toEqual([]);
    const later = NOW + EMAIL_CONFIRMATION_TTL_MS;
    expect(decide(command('RequestEmailConfirmation', 'r2', later), given([requested('r1')]))).toEqual([
      requested('r2', later),
    ]);
    expect(decide(command('RequestEmailConfirmation', 'r3'), given([requested('r1'), confirmed]))).toEqual(
      [],
    );
  });

  it('confirms with a link it sent and not expired, once', () => {
    expect(decide(command('ConfirmEmailAddress', 'r1', NOW + 1), given([requested('r1')]))).toEqual([
      confirmed,
    ]);
    // An older link still usable confirms as well as the newest.
    const later = NOW + EMAIL_CONFIRMATION_TTL_MS;
    const twoLinks = given([requested('r0', NOW - 10), requested('r1', later - 5)]);
    expect(() => decide(command('ConfirmEmailAddress', 'r0', later), twoLinks)).toThrow(
      expect.objectContaining({
        kind: 'validation',
        violations: [expect.objectContaining({ path: 'token' })],
      }),
    );
    expect(decide(command('ConfirmEmailAddress', 'r1', later), twoLinks)).toHaveLength(1);
    // Replayed, or any link after the confirmation: a conflict.
    expect(() => decide(command('ConfirmEmailAddress', 'r1'), given([requested('r1'), confirmed]))).toThrow(
      expect.objectContaining({ kind: 'conflict' }),
    );
    // A request this mailbox never had, or a mailbox never asked.
    for (const state of [initialState(), given([requested('r1')])]) {
      expect(() => decide(command('ConfirmEmailAddress', 'unknown'), state)).toThrow(
        expect.objectContaining({ kind: 'validation' }),
      );
    }
    expect(evolve(given([requested('r1')]), confirmed)).toEqual({
      status: 'confirmed',
      confirmedAt: NOW + 1,
    });
  });

  it('signs tokens that verify, and refuses any change to them', () => {
    const token = emailConfirmationTokenOf(KEY, MAILBOX, 'r1');
    expect(verifyEmailConfirmationToken(KEY, token)).toEqual({ mailbox: MAILBOX, requestId: 'r1' });
    expect(verifyEmailConfirmationToken(`${KEY}x`, token)).toBeUndefined();
    const [payload, signature] = token.split('.') as [string, string];
    const other = Buffer.from(JSON.stringify(['eve@example.com', 'r1'])).toString('base64url');
    for (const forged of [`${other}.${signature}`, `${payload}.`, payload, `${token}.x`, '', '.']) {
      expect(verifyEmailConfirmationToken(KEY, forged)).toBeUndefined();
    }
    // The stream id shows no address.
    expect(mailboxStreamIdOf(MAILBOX)).toMatch(/^mbx_[0-9a-f]{24}$/);
  });

  it('round-trips its events through the subscription topic’s protobuf', () => {
    for (const [event, version] of [
      [requested('r1'), 1],
      [confirmed, 2],
    ] as const) {
      const recorded: RecordedEvent = {
        eventId: `e${version}`,
        streamId: mailboxStreamIdOf(MAILBOX),
        streamType: 'subscription',
        version,
        type: event.type,
        data: event.data,
        metadata: { actor: { kind: 'anonymous', id: '' } },
        occurredAt: NOW,
        globalPosition: String(version),
      };
      const { value } = encodeSubscriptionEvent(recorded);
      expect(decodeSubscriptionEvent(value)).toEqual({
        eventId: `e${version}`,
        streamId: mailboxStreamIdOf(MAILBOX),
        version,
        occurredAt: NOW,
        actor: { kind: 'anonymous', id: '' },
        correlationId: undefined,
        event,
      });
    }
  });
});
