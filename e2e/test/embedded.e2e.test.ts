import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import { eventually } from '../src/harness/processes.js';

/** The first-screen promise of the README: pnpm start, publish with a key, find it, restart, still there. */
describe('embedded mode (pnpm start)', () => {
  let marketplace: EmbeddedMarketplace;
  let sellerKey: string;

  beforeAll(async () => {
    marketplace = await EmbeddedMarketplace.start();
    sellerKey = (await marketplace.client.createAccount('seller', 'Embedded Seller')).apiKey;
  }, 120_000);

  afterAll(async () => {
    await marketplace?.stop();
  });

  const findOne = (q: string) =>
    eventually(
      async () => {
        const page = await marketplace.client.search({ q });
        return page.pagination.total === 1 ? page.products[0] : undefined;
      },
      { timeoutMs: 10_000, describe: () => `"${q}" not found:\n${marketplace.process.logs}` },
    );

  it('publishes a listing that anonymous search then finds, with its details', async () => {
    const published = await marketplace.client.publish(sellerKey, {
      name: 'Pallet of Zephyrtone wireless earbuds',
      description: 'Customer returns, tested, 200 units',
      imageUrl: marketplace.images.imageUrl('earbuds'),
      price: 12.5,
      quantity: 200,
      condition: 'customer_returns',
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    const found = await findOne('zephyrtone');
    expect(found).toMatchObject({ id: published.body.id, price: 1250, availability: 'in_stock' });
    const details = await marketplace.client.request(`/api/ucp/catalog/products/${published.body.id}`);
    expect(details.status).toBe(200);
    expect(details.body).toMatchObject({ id: published.body.id });
    // The image was re-hosted: the marketplace serves it itself, under its content hash, cacheable forever.
    const [image] = (details.body as { images: { url: string }[] }).images;
    expect(image?.url).toMatch(/^http:\/\/localhost:[0-9]+\/images\/[0-9a-f]{64}\.png$/);
    const served = await fetch(new URL(new URL(image!.url).pathname, marketplace.client.baseUrl), {
      signal: AbortSignal.timeout(5_000),
    });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('keeps listings across a graceful restart and a crash', async () => {
    const published = await marketplace.client.publish(sellerKey, {
      name: 'Quillmarsh office chairs',
      description: 'Overstock, boxed',
      imageUrl: marketplace.images.imageUrl('chairs'),
      price: 40,
      quantity: 30,
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    await findOne('quillmarsh');

    await marketplace.restart('SIGTERM');
    expect((await findOne('quillmarsh'))?.id).toBe(published.body.id);
    expect((await findOne('zephyrtone'))?.title).toBe('Pallet of Zephyrtone wireless earbuds');

    await marketplace.restart('SIGKILL');
    expect((await findOne('quillmarsh'))?.id).toBe(published.body.id);
    const after = await marketplace.client.publish(sellerKey, {
      name: 'Brindlewood cutting boards',
      description: 'Shelf pulls',
      imageUrl: marketplace.images.imageUrl('boards'),
      promotePublicly: true,
    });
    expect(after.status).toBe(201);
    expect(after.body.id).not.toBe(published.body.id);
    await findOne('brindlewood');
  }, 120_000);

  it('keeps listings that were not promoted out of search', async () => {
    const hidden = await marketplace.client.publish(sellerKey, {
      name: 'Velloran private lot',
      description: 'In-app only',
      imageUrl: marketplace.images.imageUrl('velloran-private'),
    });
    expect(hidden.status).toBe(201);
    const visible = await marketplace.client.publish(sellerKey, {
      name: 'Velloran public lot',
      description: 'Promoted',
      imageUrl: marketplace.images.imageUrl('velloran-public'),
      promotePublicly: true,
    });
    await findOne('velloran');
    const page = await marketplace.client.search({ q: 'velloran' });
    expect(page.products.map((p) => p.id)).toEqual([visible.body.id]);
    const anonymous = await marketplace.client.request(`/api/ucp/catalog/products/${hidden.body.id}`);
    expect(anonymous.status).toBe(404);
  });

  it('explains image failures as 400 problems on the field; none found is the category placeholder', async () => {
    const refused = await marketplace.client.publish(sellerKey, {
      name: 'Marrowgate lamps',
      description: 'Overstock',
      imageUrl: 'http://169.254.169.254/latest/meta-data',
      galleryImageUrls: [marketplace.images.notAnImageUrl],
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      status: 400,
      errors: [
        { path: 'imageUrl', message: expect.stringContaining('does not fetch from') },
        { path: 'galleryImageUrls/0', message: 'is not a jpeg, png, gif or webp image' },
      ],
    });
    const unseen = await marketplace.client.publish(sellerKey, {
      name: 'Marrowgate garden gnomes',
      description: 'Shelf pulls',
      category: 'toys',
    });
    // docs/specification.md, "Listings": the image library never blocks a first listing.
    expect(unseen.status).toBe(201);
    expect(unseen.body).toMatchObject({
      images: [{ url: expect.stringMatching(/\/images\/[0-9a-f]{64}\.png$/) }],
      notices: [expect.stringContaining('placeholder')],
    });
  });
});
