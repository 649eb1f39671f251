import type { z } from 'zod';
import type { Principal } from '../../domain/account.js';

/**
 * An agent-facing function (spec 4.3), independent of the transport that will expose it (MCP, REST invoke):
 * its input schema, as the specification lists the parameters, and its handler. The transport parses the
 * input with `inputSchema` (a failure is a 400 naming the parameter) before calling `handler`.
 */
export interface Tool<S extends z.ZodType = z.ZodType, R = unknown> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: S;
  /** `principal` is the caller behind an API key or agent token, undefined when anonymous. */
  handler(principal: Principal | undefined, input: z.output<S>): Promise<R>;
}
