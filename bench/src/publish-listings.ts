import type { MarketplaceClient } from '@marketplace/e2e';

/**
 * Publishes `count` listings (`listingOf(n)`, a `POST /api/products` body) one after the other as the seller:
 * their ids, in order. Publishing is the set-up of these scenarios, not what they measure.
 */
export const publishListings = async (
  client: MarketplaceClient,
  sellerKey: string,
  count: number,
  listingOf: (n: number) => Record<string, unknown>,
): Promise<string[]> => {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const listing = listingOf(n);
    // On a loaded machine a publish can outlast the client's 10 s: one more try (a duplicate lot is harmless).
    const published = await client
      .publish(sellerKey, listing)
      .catch(() => client.publish(sellerKey, listing));
    if (published.status !== 201) throw new Error(`publish answered ${published.status}`);
    ids.push(published.body.id);
  }
  return ids;
};
