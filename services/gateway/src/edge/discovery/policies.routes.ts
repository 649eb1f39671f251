import { Router } from 'express';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { Problems } from '../http/problem.js';
import type { RouteDoc } from './openapi.describe.js';

/** docs/specification.md, "Order lifecycle": the seller ships within 3 days; the buyer inspects for 48 hours. */
const SHIP_WITHIN_DAYS = 3;
const INSPECT_WITHIN_HOURS = 48;
/** The feed's `return_window` (days): the inspection window, the only time a buyer may refuse a lot. */
export const RETURN_WINDOW_DAYS = INSPECT_WITHIN_HOURS / 24;

export const TERMS_PATH = '/agents/terms.md';
export const RETURN_POLICY_PATH = '/agents/returns.md';

const POLICY_CACHE_CONTROL = 'public, max-age=300';

/** The marketplace's terms of sale, the feed's `seller_tos` (every seller sells under them). */
export const termsMarkdown = (publicBaseUrl: string): string => `# Terms of sale

Every lot on this marketplace is sold under these terms, whoever the seller is.

- **Prices** are per unit, in the listing's currency. Orders over a listing's bulk threshold go through a quote
  (\`request_quote\`); an accepted or countered quote is bought at its price while its offer is valid.
- **Payment** is on invoice terms, net 30. The marketplace records orders; money moves between buyer and seller.
- **Shipping**: the seller ships within ${SHIP_WITHIN_DAYS} days of the order. An order awaiting shipment may be
  cancelled by its buyer, or by its seller when it cannot fulfil it.
- **Inspection and disputes**: see the return policy, ${publicBaseUrl}${RETURN_POLICY_PATH}.
- **Condition** is the seller's statement (salvage, customer returns, shelf pulls, overstock, new or refurbished);
  lots are sold as described.
`;

/** The feed's `return_policy`: liquidation lots are not returned at will; the inspection window and disputes apply. */
export const returnPolicyMarkdown = (publicBaseUrl: string): string => `# Return policy

- **Inspection window**: ${INSPECT_WITHIN_HOURS} hours from delivery (the feed's \`return_window\`: ${RETURN_WINDOW_DAYS} days). The
  buyer confirms the order or opens a dispute (\`open_dispute\`) within it; when it passes without a dispute the
  order completes.
- **Disputes** are decided by the marketplace's operator: a full refund, a partial refund, a replacement, or
  rejected. Buyer and seller are emailed the outcome.
- **Outside the window**, and for a lot that matches its listing's stated condition, there is no return.
- Terms of sale: ${publicBaseUrl}${TERMS_PATH}
`;

/** GET /agents/terms.md and /agents/returns.md: the pages the product feed links as seller_tos and return_policy. */
export const policiesRoutes = (problems: Problems, publicBaseUrl: string): Router => {
  const router = Router();
  const page = (path: string, markdown: string) =>
    router
      .route(path)
      .get((_req, res) => {
        res
          .status(200)
          .type('text/markdown; charset=utf-8')
          .set('Cache-Control', POLICY_CACHE_CONTROL)
          .send(markdown);
      })
      .all(methodNotAllowed(problems, ['GET']));
  page(TERMS_PATH, termsMarkdown(publicBaseUrl));
  page(RETURN_POLICY_PATH, returnPolicyMarkdown(publicBaseUrl));
  return router;
};

export const policiesRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: TERMS_PATH,
    operationId: 'getTermsOfSale',
    summary: "The marketplace's terms of sale (the product feed's seller_tos)",
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'Markdown', contentType: 'text/markdown', text: true } },
  },
  {
    method: 'get',
    path: RETURN_POLICY_PATH,
    operationId: 'getReturnPolicy',
    summary: "The marketplace's return policy (the product feed's return_policy)",
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'Markdown', contentType: 'text/markdown', text: true } },
  },
];
