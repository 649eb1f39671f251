import { createLogger } from '@marketplace/platform';
import { openContexts } from '../../src/edge/contexts.js';
import { Problems } from '../../src/edge/http/problem.js';
import { RateLimiter } from '../../src/edge/http/rate-limit.js';
import type { Tool } from '../../src/edge/mcp/tool.js';
import { ProductViews } from '../../src/edge/product.views.js';

const BASE = 'http://marketplace.test';

/** A backend client or service that is never called: any property is another such value. */
const unused: unknown = new Proxy({}, { get: () => unused });

/** Every context's tools, in the registry's order, over backends never called: only their schemas are read. */
export const everyTool = (): readonly Tool[] =>
  openContexts(
    {
      problems: new Problems(BASE),
      identity: unused as never,
      views: new ProductViews(BASE),
      rateLimiter: RateLimiter.off(),
      logger: createLogger({ service: 'every-tool', level: 'silent' }),
      publicBaseUrl: BASE,
      bodyLimitBytes: 1024,
      adminToken: 'every-tool-admin-token',
    },
    unused as never,
    { confirmationKey: Buffer.alloc(32) },
  ).surfaces.flatMap((context) => context.tools);
