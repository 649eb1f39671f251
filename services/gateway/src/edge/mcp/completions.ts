import type { Logger } from '@marketplace/platform';
import type { Principal } from '../account.js';
import { JSON_RPC, JsonRpcError } from './json-rpc-error.js';
import { findPrompt, VOCABULARY } from './prompts.js';

/** MCP caps a completion at 100 values (2025-11-25, utilities/completion). */
export const MAX_COMPLETION_VALUES = 100;

export type CompletionRef =
  | { readonly type: 'ref/prompt'; readonly name: string }
  | { readonly type: 'ref/resource'; readonly uri: string };

export interface CompletionResult {
  [key: string]: unknown;
  readonly completion: { values: string[]; total: number; hasMore: boolean };
}

/** Where the caller's own ids come from; each is absent when its service is not part of the deployment. */
export interface CompletionSources {
  /** The caller's quote request ids: a buyer's own requests, or those addressed to a seller. */
  readonly quoteRequestIds?: ((principal: Principal) => Promise<readonly string[]>) | undefined;
  /** A seller's own product ids. */
  readonly sellerProductIds?: ((principal: Principal) => Promise<readonly string[]>) | undefined;
  /** The caller's saved-search subscription ids (marketplace://subscriptions/{id}). */
  readonly subscriptionIds?: ((principal: Principal) => Promise<readonly string[]>) | undefined;
}

/** `completion/complete` for prompt arguments and resource-template variables, prefix-filtered. */
export class McpCompletions {
  constructor(
    private readonly sources: CompletionSources,
    private readonly templates: () => readonly string[],
    private readonly logger: Logger,
  ) {}

  async complete(
    principal: Principal | undefined,
    ref: CompletionRef,
    argument: { readonly name: string; readonly value: string },
  ): Promise<CompletionResult> {
    if (ref.type === 'ref/prompt') {
      const prompt = findPrompt(ref.name);
      if (!prompt.arguments.some((arg) => arg.name === argument.name)) {
        throw new JsonRpcError(
          JSON_RPC.invalidParams,
          `Invalid params: argument.name: ${ref.name} has no argument ${argument.name}`,
        );
      }
    } else if (!this.templates().includes(ref.uri)) {
      throw new JsonRpcError(
        JSON_RPC.invalidParams,
        `Invalid params: ref.uri: no resource template ${ref.uri}; resources/templates/list names them`,
      );
    }
    return resultOf(await this.candidates(principal, ref, argument.name), argument.value);
  }

  private async candidates(
    principal: Principal | undefined,
    ref: CompletionRef,
    name: string,
  ): Promise<readonly string[]> {
    const vocabulary = VOCABULARY.get(name);
    if (vocabulary) return vocabulary;
    const source =
      ref.type === 'ref/resource'
        ? this.sources.subscriptionIds
        : name === 'quote_request_id'
          ? this.sources.quoteRequestIds
          : name === 'product_id'
            ? this.sources.sellerProductIds
            : undefined;
    if (source === undefined || principal === undefined) return [];
    try {
      return await source(principal);
    } catch (error) {
      // A suggestion is a convenience: a refused or unavailable lookup offers nothing rather than failing.
      this.logger.warn({ err: error, argument: name }, 'MCP completion lookup failed');
      return [];
    }
  }
}

const resultOf = (candidates: readonly string[], prefix: string): CompletionResult => {
  const matching = candidates.filter((value) => value.toLowerCase().startsWith(prefix.toLowerCase()));
  return {
    completion: {
      values: matching.slice(0, MAX_COMPLETION_VALUES),
      total: matching.length,
      hasMore: matching.length > MAX_COMPLETION_VALUES,
    },
  };
};
