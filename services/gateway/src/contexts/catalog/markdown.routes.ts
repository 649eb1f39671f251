import { Router } from 'express';
import { z } from 'zod';
import { notFound, parseProductId } from '@marketplace/platform';
import { CATEGORY_NAMES, isCategory } from '@marketplace/vocabulary';
import type { CatalogQueries } from './catalog.queries.js';
import type { ProductDetails } from '../../edge/product.views.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { RETURN_POLICY_PATH, TERMS_PATH } from '../../edge/discovery/policies.routes.js';

/** Listings change: agents may keep a rendition, a feed page or the sitemap for a minute. */
export const LISTING_DOCUMENT_CACHE_CONTROL = 'public, max-age=60';

/** Where the markdown rendition of a public listing lives (listed in the agent sitemap). */
export const markdownUrlOf = (publicBaseUrl: string, productId: string): string =>
  `${publicBaseUrl}/agents/products/${encodeURIComponent(productId)}.md`;

/**
 * Seller text rendered literally: markdown punctuation is escaped and angle brackets become entities, so a
 * title can neither inject links or headings nor raw HTML into the page an agent reads.
 */
export const escapeMarkdown = (text: string): string =>
  text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replace(/([\\`*_{}[\]#!|~])/g, '\\$1')
    // A list marker or an ordered-list number at the start of a line.
    .replace(/^(\s*)([-+])/gm, '$1\\$2')
    .replace(/^(\s*)([0-9]+)\./gm, '$1$2\\.');

const dollars = (cents: number, currency: string): string => `${(cents / 100).toFixed(2)} ${currency}`;

/** The rendition: what a buyer needs to decide, as a short markdown page with the next steps for an agent. */
export const productMarkdown = (product: ProductDetails, publicBaseUrl: string): string => {
  const { pricing, seller } = product;
  const category = isCategory(product.category) ? CATEGORY_NAMES[product.category] : product.category;
  const sellerName = [seller.company ?? seller.name, seller.country].filter(Boolean).join(', ');
  const facts = [
    ['Product id', `\`${product.id}\``],
    ['Unit price', dollars(pricing.unit_price, pricing.currency)],
    ...(pricing.original_retail_price === null
      ? []
      : [['Original retail', dollars(pricing.original_retail_price, pricing.currency)]]),
    ...(pricing.discount_percent === null ? [] : [['Discount off retail', `${pricing.discount_percent}%`]]),
    [
      'Availability',
      `${product.availability === 'in_stock' ? 'In stock' : 'Out of stock'}, ${product.quantity_available} units`,
    ],
    ['Minimum order', `${pricing.min_order_quantity} units`],
    ['Minimum quote', `${pricing.min_quote_quantity} units`],
    ['Instant checkout', pricing.instant_checkout ? 'yes (quick_buy)' : 'no (request_quote)'],
    ...(product.shipping === null ? [] : [['Freight', freightText(product, pricing.currency)]]),
    ['Condition', product.condition === null ? 'not stated' : product.condition.replaceAll('_', ' ')],
    ['Category', escapeMarkdown(category)],
    ...(product.brand === null ? [] : [['Brand', escapeMarkdown(product.brand)]]),
    ['SKU', escapeMarkdown(product.sku)],
    ...(sellerName === '' ? [] : [['Seller', escapeMarkdown(sellerName)]]),
    ['Updated', product.updated_at],
  ];
  const images = product.images.map((image, index) => `![Image ${index + 1}](${image.url})`).join('\n');
  return `# ${escapeMarkdown(product.title)}

${facts.map(([name, value]) => `- **${name}:** ${value}`).join('\n')}

## Description

${escapeMarkdown(product.description)}
${images === '' ? '' : `\n## Images\n\n${images}\n`}
## Next steps for agents

- Details as JSON: ${product.url}
- Ask for a bulk price with the MCP tool \`request_quote\` (product_id \`${product.id}\`); orders over ${pricing.bulk_threshold.more_than_units} units or ${dollars(pricing.bulk_threshold.more_than_subtotal, pricing.currency)} always go through a quote.
- MCP endpoint: ${publicBaseUrl}/mcp (tools: ${publicBaseUrl}/api/mcp/schema.json)
- Terms of sale: ${publicBaseUrl}${TERMS_PATH}; return policy: ${publicBaseUrl}${RETURN_POLICY_PATH}
`;
};

/** The freight terms in words (docs/specification.md, "Checkout and orders": freight). */
const freightText = (product: ProductDetails, currency: string): string => {
  const shipping = product.shipping;
  switch (shipping?.mode) {
    case 'included':
      return 'included in the price';
    case 'flat_per_order':
      return `${dollars(shipping.cents ?? 0, currency)} per order`;
    case 'per_unit':
      return `${dollars(shipping.cents ?? 0, currency)} per unit`;
    case 'buyer_pickup':
      return `buyer pickup from ${escapeMarkdown(shipping.ship_from_region ?? '')}`;
    default:
      return 'quoted on request: ask with `request_quote` and your shipping destination';
  }
};

const productIdParameters = z.object({
  productId: z
    .string()
    .regex(/^product_[1-9][0-9]*$/)
    .describe('product_<number>'),
});

/** GET /agents/products/{productId}.md: the markdown rendition of a public listing (docs/specification.md, "Service"). */
export const markdownRoutes = (
  problems: Problems,
  catalog: CatalogQueries,
  publicBaseUrl: string,
): Router => {
  const router = Router();
  router
    .route('/agents/products/:file')
    .get(async (req, res) => {
      const productId = req.params.file.replace(/\.md$/, '');
      // Only `<id>.md` names a rendition; a malformed id names no product, like an unknown one.
      if (!req.params.file.endsWith('.md') || parseProductId(productId) === undefined) {
        throw notFound(`no markdown rendition at ${req.path}`);
      }
      // As an anonymous viewer: a listing that is not public has no rendition.
      const product = await catalog.details(productId, undefined);
      res
        .status(200)
        .type('text/markdown; charset=utf-8')
        .set('Cache-Control', LISTING_DOCUMENT_CACHE_CONTROL)
        .send(productMarkdown(product, publicBaseUrl));
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};

export const markdownRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/agents/products/{productId}.md',
    operationId: 'getProductMarkdown',
    summary: 'The markdown rendition of a public listing',
    tags: ['discovery'],
    auth: 'none',
    pathParameters: productIdParameters,
    responses: {
      200: { description: 'Markdown', contentType: 'text/markdown', text: true },
      404: 'No public listing with this id',
    },
  },
];
