import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { AppError } from '@marketplace/platform';
import { catalogV1, listingV1, type commonV1 } from '@marketplace/proto';
import { ClientError, Metadata, Status, createChannel, createClient, type CallContext } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { pino } from 'pino';
import {
  configureInternalAuth,
  createGrpcClient,
  signInternalToken,
  startGrpcServer,
  type GrpcServer,
  type InternalTokenClaims,
} from '../src/index.js';

const LISTING_SERVICE = listingV1.ListingServiceDefinition.fullName;
const CATALOG_SERVICE = catalogV1.CatalogServiceDefinition.fullName;
const KEY = randomBytes(32);
const SELLER_7 = { kind: 'seller', id: '7' };
const SELLER_8 = { kind: 'seller', id: '8' };

/** What the listing handler saw of each call that reached it. */
const reached: { actor: commonV1.Actor | undefined; authorization: string | undefined }[] = [];

const unused = async (): Promise<never> => {
  throw new AppError('unavailable', 'not called by these tests');
};
const listing = {
  async updateListing(request: listingV1.UpdateListingRequest, context: CallContext) {
    reached.push({ actor: request.actor, authorization: context.metadata.get('authorization') });
    return { listing: { productId: request.productId, priceCents: request.changes?.priceCents ?? 0 } };
  },
  createListing: unused,
  getListing: unused,
  setQuantity: unused,
  bulkUpdateListings: unused,
  reserveStock: unused,
  releaseStock: unused,
  listSellerListings: unused,
  withdrawListing: unused,
  relistListing: unused,
  setListingShipping: unused,
  bulkUpsertListings: unused,
} satisfies listingV1.ListingServiceImplementation;

const refusals: Record<string, unknown>[] = [];
const logger = pino(
  { level: 'warn' },
  { write: (line: string) => refusals.push(JSON.parse(line) as Record<string, unknown>) },
);

const priceChange = (actor: commonV1.Actor): listingV1.UpdateListingRequest =>
  listingV1.UpdateListingRequest.fromPartial({
    actor,
    sellerAccountId: Number(actor.id),
    productId: 'product_1',
    changes: { priceCents: 1 },
  });

const bearer = (token: string) => ({ metadata: Metadata({ authorization: `Bearer ${token}` }) });

/** A token for a change by seller 7 on the listing service, signed now with KEY unless told otherwise. */
const tokenFor = ({ key = KEY, ...claims }: Partial<InternalTokenClaims> & { key?: Uint8Array } = {}) =>
  signInternalToken(key, {
    caller: 'gateway',
    audience: LISTING_SERVICE,
    actor: SELLER_7,
    issuedAtMs: Date.now(),
    ...claims,
  });

describe('internal call authentication (a plain client on a service port)', () => {
  let server: GrpcServer;
  let channel: ReturnType<typeof createChannel>;
  let plain: ReturnType<typeof createClient<typeof listingV1.ListingServiceDefinition>>;

  /** The call fails with UNAUTHENTICATED and no handler ran. */
  const expectRefused = async (call: Promise<unknown>): Promise<void> => {
    const error = await call.then(
      () => new Error('expected a refusal'),
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).code).toBe(Status.UNAUTHENTICATED);
    expect(reached).toEqual([]);
  };

  beforeAll(async () => {
    configureInternalAuth({ key: KEY, caller: 'gateway' });
    server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [{ definition: listingV1.ListingServiceDefinition, implementation: listing }],
      logger,
      serviceName: 'listing',
    });
    channel = createChannel(server.address);
    plain = createClient(listingV1.ListingServiceDefinition, channel);
  });
  beforeEach(() => {
    reached.length = 0;
    refusals.length = 0;
  });
  afterAll(async () => {
    channel.close();
    await server.shutdown(1_000);
  });

  it('refuses a call without a token: another seller’s price stays as it is', async () => {
    await expectRefused(plain.updateListing(priceChange(SELLER_7)));
    expect(refusals).toEqual([
      expect.objectContaining({ method: `/${LISTING_SERVICE}/UpdateListing`, reason: 'no token' }),
    ]);
  });

  it('refuses a token signed with another key', async () => {
    const forged = await tokenFor({ key: randomBytes(32) });
    await expectRefused(plain.updateListing(priceChange(SELLER_7), bearer(forged)));
  });

  it('refuses an expired token', async () => {
    const expired = await tokenFor({ issuedAtMs: Date.now() - 2 * 60_000 });
    await expectRefused(plain.updateListing(priceChange(SELLER_7), bearer(expired)));
  });

  it('refuses a token issued for another service', async () => {
    const forCatalog = await tokenFor({ audience: CATALOG_SERVICE });
    await expectRefused(plain.updateListing(priceChange(SELLER_7), bearer(forCatalog)));
  });

  it('refuses a token whose payload was changed, and one with the signature stripped', async () => {
    const genuine = await tokenFor({ actor: SELLER_8 });
    const [header, payload, signature] = genuine.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>;
    const altered = Buffer.from(JSON.stringify({ ...claims, actor: SELLER_7 })).toString('base64url');
    const unsigned = Buffer.from(JSON.stringify({ alg: 'none', typ: 'marketplace-internal+jwt' })).toString(
      'base64url',
    );
    await expectRefused(
      plain.updateListing(priceChange(SELLER_7), bearer(`${header}.${altered}.${signature}`)),
    );
    await expectRefused(plain.updateListing(priceChange(SELLER_7), bearer(`${unsigned}.${payload}.`)));
  });

  it('takes the actor from the token, not from the request', async () => {
    const forSeller8 = await tokenFor({ actor: SELLER_8 });
    await plain.updateListing(priceChange(SELLER_7), bearer(forSeller8));
    expect(reached.map(({ actor }) => actor)).toEqual([SELLER_8]);
  });

  it('lets this process’s clients through, signing once per audience and actor', async () => {
    const client = createGrpcClient(listingV1.ListingServiceDefinition, server.address);
    try {
      await client.client.updateListing(priceChange(SELLER_7));
      await client.client.updateListing(priceChange(SELLER_7));
      await client.client.updateListing(priceChange(SELLER_8));
    } finally {
      client.close();
    }
    expect(reached.map(({ actor }) => actor)).toEqual([SELLER_7, SELLER_7, SELLER_8]);
    const [first, second, third] = reached.map(({ authorization }) => authorization);
    expect(first).toMatch(/^Bearer /);
    expect(second).toBe(first);
    expect(third).not.toBe(first);
  });

  it('answers health checks without a token (the kubelet’s probes)', async () => {
    const health = createClient(HealthDefinition, channel);
    await expect(health.check({ service: '' })).resolves.toEqual({ status: 1 });
    await expect(health.check({ service: 'liveness' })).resolves.toEqual({ status: 1 });
  });
});
