import type { ContextSurface, EdgeServices } from '../../edge/context.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { adminRoutes } from './admin.routes.js';
import { agentTokensRouteDocs, agentTokensRoutes } from './agent-tokens.routes.js';

/** The operator API is left out of /openapi.json on purpose (services/gateway/README.md). */
export const routeDocs: readonly RouteDoc[] = [...agentTokensRouteDocs];

/** Accounts, API keys and agent tokens: the gateway's own state (schema `identity`). */
export const identityContext = (edge: EdgeServices): ContextSurface => {
  const { problems, identity, logger, adminToken } = edge;
  return {
    routes: [
      agentTokensRoutes(problems, identity, logger),
      ...(adminToken === undefined
        ? []
        : [adminRoutes({ problems, identity, adminToken, logger, bodyLimitBytes: edge.bodyLimitBytes })]),
    ],
    tools: [],
  };
};
