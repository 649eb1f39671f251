import type { Principal } from '../account.js';

/** A resource at a fixed URI (`resources/list`). */
export interface FixedResource {
  readonly uri: string;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  read(principal: Principal | undefined): Promise<unknown>;
}

/** Resources named by an RFC 6570 level-1 template with one `{id}` variable (`resources/templates/list`). */
export interface TemplatedResource {
  readonly uriTemplate: string;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  read(principal: Principal | undefined, id: string): Promise<unknown>;
  /**
   * Present when `resources/subscribe` may watch these resources (docs/agents.md, "MCP resource subscriptions"):
   * resolves when `principal` may, throws an AppError otherwise.
   */
  checkSubscribable?(principal: Principal | undefined, id: string): Promise<void>;
}

export const RESOURCE_MIME_TYPE = 'application/json';

/** The MCP resources of docs/specification.md, "MCP tools" (stats, categories, saved-search subscriptions), all JSON documents. */
export class McpResources {
  private readonly templates: readonly { resource: TemplatedResource; pattern: RegExp }[];

  constructor(
    readonly fixed: readonly FixedResource[],
    templated: readonly TemplatedResource[],
  ) {
    this.templates = templated.map((resource) => ({ resource, pattern: patternOf(resource.uriTemplate) }));
  }

  get templated(): readonly TemplatedResource[] {
    return this.templates.map(({ resource }) => resource);
  }

  /** The reader of `uri`, or undefined when no resource has this URI. */
  find(uri: string): ((principal: Principal | undefined) => Promise<unknown>) | undefined {
    const fixed = this.fixed.find((resource) => resource.uri === uri);
    if (fixed) return (principal) => fixed.read(principal);
    for (const { resource, pattern } of this.templates) {
      const id = pattern.exec(uri)?.[1];
      if (id !== undefined) return (principal) => resource.read(principal, decodeURIComponent(id));
    }
    return undefined;
  }

  /**
   * What `resources/subscribe` on `uri` checks: `unknown` when no resource has this URI, `fixed` when it names
   * one that cannot be watched, else the check of the caller.
   */
  subscribable(
    uri: string,
  ): 'unknown' | 'not_subscribable' | ((principal: Principal | undefined) => Promise<void>) {
    if (this.fixed.some((resource) => resource.uri === uri)) return 'not_subscribable';
    for (const { resource, pattern } of this.templates) {
      const id = pattern.exec(uri)?.[1];
      if (id === undefined) continue;
      const check = resource.checkSubscribable?.bind(resource);
      return check ? (principal) => check(principal, decodeURIComponent(id)) : 'not_subscribable';
    }
    return 'unknown';
  }
}

/** `marketplace://subscriptions/{id}` → /^marketplace:\/\/subscriptions\/([^/?#]+)$/ */
const patternOf = (uriTemplate: string): RegExp => {
  const [prefix, suffix, ...rest] = uriTemplate.split('{id}');
  if (prefix === undefined || suffix === undefined || rest.length > 0) {
    throw new Error(`resource template ${uriTemplate} must have exactly one {id}`);
  }
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`^${escape(prefix)}([^/?#]+)${escape(suffix)}$`);
};
