import { JSON_RPC, JsonRpcError } from './json-rpc-error.js';

/** The RFC 5424 severities of MCP's `logging/setLevel` (2025-11-25, utilities/logging). */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * `logging/setLevel` (docs/agents.md, "Prompts, completions, logging"): no `notifications/message` is ever sent,
 * in a session or not, so a valid level is acknowledged and nothing is stored; an unknown level is -32602.
 */
export const setLogLevel = (level: unknown): Record<string, never> => {
  if (typeof level !== 'string' || !(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new JsonRpcError(
      JSON_RPC.invalidParams,
      `Invalid params: level must be one of ${LOG_LEVELS.join(', ')}`,
    );
  }
  return {};
};
