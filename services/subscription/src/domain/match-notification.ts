import type { DomainEvent } from '@marketplace/eventsourcing';
import { escapeHtml } from '@marketplace/platform';
import type { ListingFacts } from './saved-search.match.js';
import type { Subscription } from './subscription.js';

/** The event type of every saved-search notification (docs/specification.md, "Saved searches"). */
export const SAVED_SEARCH_MATCH = 'saved_search.match';

/**
 * A new listing matched saved searches with an `mcp_resource` channel for the first time, so their resources
 * list it: the gateway tells the MCP sessions subscribed to them (docs/agents.md, "MCP resource subscriptions").
 * Stream `match_<product id>` on the subscription topic; webhooks and emails are deliveries, not events.
 */
export type SavedSearchesMatched = DomainEvent<
  'SavedSearchesMatched',
  { readonly productId: string; readonly subscriptionIds: readonly string[]; readonly matchedAt: number }
>;

/** The stream of a listing's match events. */
export const matchStreamIdOf = (productId: string): string => `match_${productId}`;

/** A matched product as notifications show it: the docs/specification.md, "Products and pagination" summary fields plus what the filter looked at. */
export interface MatchedProduct {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly price: number;
  readonly currency: string;
  readonly availability: 'in_stock' | 'out_of_stock';
  readonly quantity_available: number;
  readonly images: readonly { readonly url: string }[];
  readonly url: string;
  readonly category: string;
  readonly condition: string | null;
  readonly min_order_quantity: number;
  readonly seller: { readonly account_id: number; readonly country: string | null };
}

/** The body of a saved_search.match webhook (docs/specification.md, "Saved searches"); `id` is the delivery id. */
export interface MatchPayload {
  readonly id: string;
  readonly type: typeof SAVED_SEARCH_MATCH;
  readonly created_at: string;
  readonly data: {
    readonly subscription_id: string;
    readonly query: Readonly<Record<string, unknown>>;
    readonly product: MatchedProduct;
  };
}

export const matchedProductOf = (listing: ListingFacts, publicBaseUrl: string): MatchedProduct => ({
  id: listing.productId,
  title: listing.title,
  description: listing.description,
  price: listing.priceCents,
  currency: listing.currency,
  availability: listing.quantity > 0 ? 'in_stock' : 'out_of_stock',
  quantity_available: listing.quantity,
  images: listing.imageUrls.map((url) => ({ url: new URL(url, `${publicBaseUrl}/`).toString() })),
  url: `${publicBaseUrl}/api/ucp/catalog/products/${encodeURIComponent(listing.productId)}`,
  category: listing.category,
  condition: listing.condition === '' ? null : listing.condition,
  min_order_quantity: listing.minOrderQuantity,
  seller: { account_id: listing.sellerAccountId, country: listing.sellerCountry ?? null },
});

export const matchPayloadOf = (
  deliveryId: string,
  subscription: Pick<Subscription, 'subscriptionId' | 'query'>,
  product: MatchedProduct,
  matchedAt: number,
): MatchPayload => ({
  id: deliveryId,
  type: SAVED_SEARCH_MATCH,
  created_at: new Date(matchedAt).toISOString(),
  data: { subscription_id: subscription.subscriptionId, query: subscription.query.original, product },
});

const dollars = (cents: number, currency: string): string => `${(cents / 100).toFixed(2)} ${currency}`;

/** The email of a match: plain text and HTML, with the product link and a way to stop the mails. */
export const matchEmailOf = (
  payload: MatchPayload,
  unsubscribeUrl: string,
): { subject: string; text: string; html: string } => {
  const { product, subscription_id: subscriptionId } = payload.data;
  const price = dollars(product.price, product.currency);
  const subject = `New match for your saved search: ${product.title}`;
  const text = [
    `A new lot matches your saved search ${subscriptionId}:`,
    '',
    product.title,
    `${product.quantity_available} units at ${price} per unit (minimum order ${product.min_order_quantity})`,
    product.url,
    '',
    `To stop these emails: ${unsubscribeUrl}`,
  ].join('\n');
  const html = [
    `<p>A new lot matches your saved search <code>${escapeHtml(subscriptionId)}</code>:</p>`,
    `<p><a href="${escapeHtml(product.url)}">${escapeHtml(product.title)}</a><br>`,
    `${product.quantity_available} units at ${escapeHtml(price)} per unit (minimum order ${product.min_order_quantity})</p>`,
    `<p><a href="${escapeHtml(unsubscribeUrl)}">Stop these emails</a></p>`,
  ].join('\n');
  return { subject, text, html };
};
