import { describe, expect, it } from '@jest/globals';
import { AppError, validationError, type ErrorKind } from '@marketplace/platform';
import { ClientError, Status } from 'nice-grpc-common';
import { ErrorInfo, RichClientError } from 'nice-grpc-error-details';
import { appErrorOf, serverErrorOf } from '../src/app-error-status.js';

const PATH = '/marketplace.listing.v1.ListingService/CreateListing';

/** What a client receives for a server error: same code, message and details. */
const received = (error: AppError): RichClientError => {
  const sent = serverErrorOf(error);
  return new RichClientError(PATH, sent.code, sent.details, sent.extra);
};

describe('AppError ⇄ gRPC status', () => {
  it('restores kind, message and field violations from the details', () => {
    const original = validationError('invalid listing', [
      { path: 'galleryImageUrls/3', message: 'must be an https URL' },
      { path: 'price', message: 'must be positive' },
    ]);
    const restored = appErrorOf(received(original));
    expect(restored).toBeInstanceOf(AppError);
    expect(restored).toMatchObject({
      kind: 'validation',
      message: 'invalid listing',
      violations: original.violations,
    });
  });

  it.each<[ErrorKind, Status]>([
    ['conflict', Status.ABORTED],
    ['payload_too_large', Status.RESOURCE_EXHAUSTED],
    ['rate_limited', Status.RESOURCE_EXHAUSTED],
    ['idempotency_conflict', Status.ALREADY_EXISTS],
  ])('sends %s as status %i and restores the kind from ErrorInfo', (kind, status) => {
    const sent = serverErrorOf(new AppError(kind, 'no'));
    expect(sent.code).toBe(status);
    expect(appErrorOf(received(new AppError(kind, 'no')))?.kind).toBe(kind);
  });

  it.each<[Status, ErrorKind]>([
    [Status.DEADLINE_EXCEEDED, 'unavailable'],
    [Status.UNAVAILABLE, 'unavailable'],
    [Status.CANCELLED, 'unavailable'],
    [Status.ALREADY_EXISTS, 'conflict'],
    [Status.FAILED_PRECONDITION, 'conflict'],
    [Status.RESOURCE_EXHAUSTED, 'payload_too_large'],
    [Status.OUT_OF_RANGE, 'validation'],
  ])('gives a bare status %i the kind %s and a message without transport details', (status, kind) => {
    const bare = new ClientError(PATH, status, 'connect ECONNREFUSED 10.0.0.7:50051');
    const restored = appErrorOf(bare);
    expect(restored).toMatchObject({ kind, message: `${PATH} failed: ${Status[status]}`, violations: [] });
    expect(restored?.cause).toBe(bare);
  });

  it.each([Status.INTERNAL, Status.UNKNOWN, Status.UNIMPLEMENTED, Status.DATA_LOSS, Status.UNAUTHENTICATED])(
    'leaves status %i without a kind',
    (status) => {
      expect(appErrorOf(new ClientError(PATH, status, 'internal error'))).toBeUndefined();
    },
  );

  it('ignores ErrorInfo from another domain and unknown reasons', () => {
    const foreign = new RichClientError(PATH, Status.NOT_FOUND, 'no such bucket', [
      ErrorInfo.fromPartial({ domain: 'storage.example', reason: 'VALIDATION' }),
    ]);
    expect(appErrorOf(foreign)).toMatchObject({ kind: 'not_found', message: `${PATH} failed: NOT_FOUND` });
    const unknownReason = new RichClientError(PATH, Status.ABORTED, 'stale', [
      ErrorInfo.fromPartial({ domain: 'marketplace', reason: 'TEAPOT' }),
    ]);
    expect(appErrorOf(unknownReason)?.kind).toBe('conflict');
  });
});
