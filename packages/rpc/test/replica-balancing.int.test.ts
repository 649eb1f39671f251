import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError, isAppError } from '@marketplace/platform';
import { listingV1 } from '@marketplace/proto';
import { pino } from 'pino';
import { createGrpcClient, startGrpcServer, type GrpcClient, type GrpcServer } from '../src/index.js';

const logger = pino({ level: 'silent' });

/** One replica of a listing service: answers with its own name, or `UNAVAILABLE` while it is "dying". */
const replica = (name: string) => {
  const state = { dying: false, calls: 0 };
  const answer = (): { listing: listingV1.Listing } => {
    state.calls++;
    if (state.dying) throw new AppError('unavailable', `${name} is going away`);
    return { listing: listingV1.Listing.fromPartial({ productId: name }) };
  };
  const notUsed = async (): Promise<never> => {
    throw new AppError('unavailable', 'not called by these tests');
  };
  const implementation = {
    getListing: async () => answer(),
    createListing: async () => answer(),
    updateListing: async () => answer(),
    setQuantity: notUsed,
    bulkUpdateListings: notUsed,
    reserveStock: notUsed,
    releaseStock: notUsed,
    listSellerListings: notUsed,
    withdrawListing: notUsed,
    relistListing: notUsed,
    setListingShipping: notUsed,
    bulkUpsertListings: notUsed,
  } satisfies listingV1.ListingServiceImplementation;
  return { name, state, implementation };
};

const outcome = async (call: Promise<{ listing?: listingV1.Listing }>): Promise<string> => {
  try {
    return (await call).listing?.productId ?? 'none';
  } catch (error) {
    if (isAppError(error)) return error.kind;
    throw error;
  }
};

/** Two replicas behind one target with two addresses, as a headless Service's name resolves to its pods. */
describe('a client over two replicas', () => {
  const replicas = [replica('a'), replica('b')];
  const servers: GrpcServer[] = [];
  let grpc: GrpcClient<listingV1.ListingServiceDefinition>;

  beforeAll(async () => {
    for (const { name, implementation } of replicas) {
      servers.push(
        await startGrpcServer({
          host: '127.0.0.1',
          port: 0,
          services: [{ definition: listingV1.ListingServiceDefinition, implementation }],
          logger,
          serviceName: `listing-${name}`,
        }),
      );
    }
    const target = `ipv4:${servers.map((server) => server.address).join(',')}`;
    grpc = createGrpcClient(listingV1.ListingServiceDefinition, target, {
      repeatableMethods: ['GetListing'],
    });
  });
  afterAll(async () => {
    grpc.close();
    for (const server of servers) await server.shutdown(1_000);
  });

  const getListing = () => outcome(grpc.client.getListing({ productId: 'product_1' }));
  const createListing = (idempotencyKey?: string) =>
    outcome(grpc.client.createListing({ sellerAccountId: 7, idempotencyKey }));
  const repeat = async (times: number, call: () => Promise<string>): Promise<string[]> => {
    const results: string[] = [];
    for (let i = 0; i < times; i++) results.push(await call());
    return results;
  };

  it('spreads calls over every replica, round robin', async () => {
    // The first calls go to whichever connection is ready first; once both are, they alternate.
    const first = new Set<string>();
    for (let i = 0; i < 100 && first.size < 2; i++) first.add(await getListing());
    const then = await repeat(10, getListing);

    expect(first).toEqual(new Set(['a', 'b']));
    expect(then.filter((name) => name === 'a')).toHaveLength(5);
    expect(then.filter((name) => name === 'b')).toHaveLength(5);
  });

  it('sends a read, or a write with an idempotency key, once more when its replica is going away', async () => {
    replicas[0]!.state.dying = true;
    replicas[0]!.state.calls = 0;

    const reads = await repeat(6, getListing);
    const keyedWrites = await repeat(6, () => createListing('key-1'));
    const unkeyedWrites = await repeat(4, () => createListing());

    expect(reads).toEqual(Array(6).fill('b'));
    expect(keyedWrites).toEqual(Array(6).fill('b'));
    // A write without a key might have been applied: it is never sent twice, so some fail.
    expect(unkeyedWrites).toContain('unavailable');
    expect(unkeyedWrites).toContain('b');
    expect(replicas[0]!.state.calls).toBeGreaterThan(0);
    replicas[0]!.state.dying = false;
  });

  it('keeps answering when a replica is gone', async () => {
    await servers[0]!.shutdown(0);

    const answeredBy = await repeat(8, getListing);

    expect(answeredBy).toEqual(Array(8).fill('b'));
  });
});
