import { Router } from 'express';
import type { CatalogQueries } from './catalog.queries.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { FEED_MAX_PAGE_SIZE } from './feed.routes.js';
import { LISTING_DOCUMENT_CACHE_CONTROL, markdownUrlOf } from './markdown.routes.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/** The sitemaps.org protocol's limit of URLs in one file. */
export const SITEMAP_MAX_URLS = 50_000;

const xmlEscape = (text: string): string =>
  text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');

/**
 * GET /agents/sitemap.xml: the agents' guide (`/llms.txt`) first, then every public listing's markdown rendition
 * with its last modification (docs/specification.md, "Service", 1.7), in product-number order, read page by page from the catalog.
 * The guide keeps the document valid when no listing is public yet: the sitemaps.org schema wants at least one
 * `<url>`. Written as it is read, so memory stays flat however many listings there are. Beyond the protocol's
 * 50,000 URLs the rest are left out: a sitemap index over several files is the next step when the marketplace
 * gets there.
 */
export const sitemapRoutes = (problems: Problems, catalog: CatalogQueries, publicBaseUrl: string): Router => {
  const router = Router();
  router
    .route('/agents/sitemap.xml')
    .get(async (_req, res) => {
      // The first page is read before answering, so a catalog failure is still a problem document.
      let page = await catalog.publicProducts(undefined, FEED_MAX_PAGE_SIZE);
      res
        .status(200)
        .type('application/xml; charset=utf-8')
        .set('Cache-Control', LISTING_DOCUMENT_CACHE_CONTROL);
      res.write(
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' +
          `  <url><loc>${xmlEscape(`${publicBaseUrl}/llms.txt`)}</loc></url>\n`,
      );
      let written = 1;
      for (;;) {
        const urls = page.products
          .slice(0, SITEMAP_MAX_URLS - written)
          .map(
            (product) =>
              `  <url><loc>${xmlEscape(markdownUrlOf(publicBaseUrl, product.id))}</loc>` +
              `<lastmod>${product.updated_at}</lastmod></url>\n`,
          );
        written += urls.length;
        res.write(urls.join(''));
        if (page.next_cursor === null || written >= SITEMAP_MAX_URLS) break;
        page = await catalog.publicProducts(page.next_cursor, FEED_MAX_PAGE_SIZE);
      }
      res.end('</urlset>\n');
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};

export const sitemapRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/agents/sitemap.xml',
    operationId: 'getAgentSitemap',
    summary:
      "The agents' guide, then every public listing: its markdown rendition URL and lastmod (sitemaps.org 0.9)",
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'Sitemap XML', contentType: 'application/xml', text: true } },
  },
];
