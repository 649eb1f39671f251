import { describe, expect, it } from '@jest/globals';
import type { catalogV1, listingV1 } from '@marketplace/proto';
import { ProductViews } from '../src/edge/product.views.js';

const views = new ProductViews('https://market.test');
const CREATED = Date.UTC(2026, 0, 2, 3, 4, 5);

const product: catalogV1.Product = {
  id: 'product_7',
  title: 'Pallet of earbuds',
  description: 'Customer returns',
  priceCents: 1250,
  currency: 'USD',
  availability: 'in_stock',
  version: 1,
  quantityAvailable: 200,
  imageUrls: ['/images/abc.jpg', 'https://cdn.test/b.png'],
  category: 'electronics',
  condition: 'customer_returns',
  brand: '',
  sku: 'SKU-7',
  originalRetailPriceCents: 4000,
  minOrderQuantity: 10,
  minQuoteQuantity: 50,
  instantCheckout: false,
  promotePublicly: true,
  shipping: undefined,
  sellerAccountId: 3,
  createdAtMs: CREATED,
  updatedAtMs: CREATED + 1000,
  seller: { name: 'Acme Surplus', company: '', country: 'US' },
};

describe('product views', () => {
  it('render a search result with exactly the fields of docs/specification.md, "Products and pagination", images absolute', () => {
    expect(views.summaryOf(product)).toEqual({
      id: 'product_7',
      title: 'Pallet of earbuds',
      description: 'Customer returns',
      price: 1250,
      currency: 'USD',
      availability: 'in_stock',
      quantity_available: 200,
      images: [{ url: 'https://market.test/images/abc.jpg' }, { url: 'https://cdn.test/b.png' }],
      url: 'https://market.test/api/ucp/catalog/products/product_7',
    });
  });

  it('render details with pricing, seller and ISO timestamps; an empty brand is null', () => {
    expect(views.detailsOf(product)).toMatchObject({
      id: 'product_7',
      price: 1250,
      sku: 'SKU-7',
      brand: null,
      category: 'electronics',
      condition: 'customer_returns',
      pricing: {
        unit_price: 1250,
        currency: 'USD',
        original_retail_price: 4000,
        discount_percent: 68,
        min_order_quantity: 10,
        min_quote_quantity: 50,
        instant_checkout: false,
        bulk_threshold: { more_than_units: 100, more_than_subtotal: 500_000 },
      },
      seller: { account_id: 3, name: 'Acme Surplus', company: null, country: 'US' },
      promote_publicly: true,
      created_at: '2026-01-02T03:04:05.000Z',
      updated_at: '2026-01-02T03:04:06.000Z',
    });
  });

  it('render a created listing in the same details shape, sold out at quantity 0', () => {
    const listing: listingV1.Listing = {
      productId: 'product_8',
      sellerAccountId: 3,
      name: 'Office chairs',
      description: 'Boxed',
      sku: 'SKU-8',
      category: 'office_supplies',
      condition: '',
      priceCents: 4000,
      currency: 'USD',
      quantity: 0,
      minOrderQuantity: 1,
      minQuoteQuantity: 1,
      brand: 'Quillmarsh',
      imageUrl: '',
      galleryImageUrls: ['/images/c.webp'],
      promotePublicly: false,
      originalRetailPriceCents: undefined,
      instantCheckout: true,
      createdAtMs: CREATED,
      updatedAtMs: CREATED,
      confirmedAtMs: CREATED,
      version: 1,
      imagePlaceholder: false,
      shipping: undefined,
    };
    const details = views.detailsOfListing(listing);
    expect(details.pricing.discount_percent).toBeNull();
    expect(details.seller).toEqual({ account_id: 3, name: null, company: null, country: null });
    expect(details).toMatchObject({
      id: 'product_8',
      title: 'Office chairs',
      availability: 'out_of_stock',
      quantity_available: 0,
      images: [{ url: 'https://market.test/images/c.webp' }],
      brand: 'Quillmarsh',
      condition: null,
      pricing: { original_retail_price: null, instant_checkout: true },
      promote_publicly: false,
    });
    expect(Object.keys(details).sort()).toEqual(Object.keys(views.detailsOf(product)).sort());
  });
});
