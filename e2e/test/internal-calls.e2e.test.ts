import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { catalogV1, listingV1, orderV1, quoteV1, subscriptionV1 } from '@marketplace/proto';
import { ClientError, Status, createChannel, createClient, type TsProtoServiceDefinition } from 'nice-grpc';
import { loopbackListeningPorts } from '../src/harness/processes.js';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';

const DEFINITIONS: readonly TsProtoServiceDefinition[] = [
  listingV1.ListingServiceDefinition,
  catalogV1.CatalogServiceDefinition,
  quoteV1.QuoteServiceDefinition,
  orderV1.OrderServiceDefinition,
  subscriptionV1.SubscriptionServiceDefinition,
];

type PlainMethod = (request: object, options: { signal: AbortSignal }) => Promise<unknown>;

/** The status a plain gRPC client (no token) gets calling `method` with `request` on a loopback port. */
const plainCall = async (
  port: number,
  definition: TsProtoServiceDefinition,
  method: string,
  request: object,
): Promise<string> => {
  const channel = createChannel(`127.0.0.1:${port}`);
  try {
    const client = createClient(definition, channel) as unknown as Record<string, PlainMethod>;
    await client[method]?.(request, { signal: AbortSignal.timeout(10_000) });
    return 'OK';
  } catch (error) {
    return error instanceof ClientError ? Status[error.code] : String(error);
  } finally {
    channel.close();
  }
};

/**
 * `pnpm start` serves each service on its own loopback port, which any local process can reach: none may act
 * without the process's own service token (docs/security.md, "Internal calls").
 */
describe('internal gRPC ports in embedded mode', () => {
  let marketplace: E2eMarketplace;
  let internalPorts: number[];

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
    const gatewayPort = Number(new URL(marketplace.client.baseUrl).port);
    internalPorts = (await loopbackListeningPorts(marketplace.pid)).filter((port) => port !== gatewayPort);
  }, 120_000);

  afterAll(async () => {
    await marketplace?.stop();
  });

  it('refuses an uncredentialed call on every port, each of which hosts one service', async () => {
    const hosted: string[] = [];
    for (const port of internalPorts) {
      for (const definition of DEFINITIONS) {
        const [firstMethod = ''] = Object.keys(definition.methods);
        const status = await plainCall(port, definition, firstMethod, {});
        // A port answers UNIMPLEMENTED for the services it does not host, before any credential matters.
        expect({ port, service: definition.fullName, status }).toEqual({
          port,
          service: definition.fullName,
          status: expect.stringMatching(/^(UNAUTHENTICATED|UNIMPLEMENTED)$/),
        });
        if (status === 'UNAUTHENTICATED') hosted.push(definition.fullName);
      }
    }
    expect(hosted.sort()).toEqual(DEFINITIONS.map(({ fullName }) => fullName).sort());
  });

  it('refuses a local process setting another seller’s price to 1 cent', async () => {
    const seller = await marketplace.client.createAccount('seller', 'Victim Seller');
    const published = await marketplace.client.publish(seller.apiKey, {
      name: 'Pallet of Brindlecove blenders',
      description: 'Overstock, boxed, 60 units',
      imageUrl: marketplace.images.imageUrl('blenders'),
      price: 80,
      quantity: 60,
      condition: 'customer_returns',
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    const answers: string[] = [];
    for (const port of internalPorts) {
      answers.push(
        await plainCall(port, listingV1.ListingServiceDefinition, 'updateListing', {
          actor: { kind: 'seller', id: String(seller.accountId) },
          sellerAccountId: seller.accountId,
          productId: published.body.id,
          changes: { priceCents: 1 },
        }),
      );
    }
    // Only the listing service's port knows the method; it refuses the call before its handler runs.
    expect(answers.filter((status) => status !== 'UNIMPLEMENTED')).toEqual(['UNAUTHENTICATED']);
  });
});
