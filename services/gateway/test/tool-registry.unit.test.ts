import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { registryOf } from '../src/edge/mcp/registry.js';
import { describeTool } from '../src/edge/mcp/tool-manifest.js';
import { everyTool } from './support/every-tool.js';

const registry = registryOf(everyTool());

describe('tool registry', () => {
  it('finds each tool by its name and keeps the order of its list', () => {
    const names = registry.tools.map((tool) => tool.name);
    expect(names.slice(0, 3)).toEqual([
      'search_inventory',
      'get_product_details',
      'get_pricing_recommendation',
    ]);
    for (const name of names) expect(registry.find(name)?.name).toBe(name);
    expect(registry.find('no_such_tool')).toBeUndefined();
  });

  it('gives every tool object-rooted input and output schemas that convert to JSON Schema', () => {
    for (const tool of registry.tools) {
      expect(z.toJSONSchema(tool.inputSchema, { io: 'input' })).toMatchObject({ type: 'object' });
      expect(z.toJSONSchema(tool.outputSchema, { io: 'output' })).toMatchObject({ type: 'object' });
    }
  });

  it('gives every tool examples that its own input schema accepts, published in its input schema', () => {
    expect(registry.tools.length).toBeGreaterThan(30);
    for (const tool of registry.tools) {
      expect([tool.name, tool.examples.length > 0]).toEqual([tool.name, true]);
      for (const example of tool.examples) {
        const parsed = tool.inputSchema.safeParse(example);
        expect([tool.name, parsed.success ? 'accepted' : parsed.error.message]).toEqual([
          tool.name,
          'accepted',
        ]);
      }
      expect(describeTool(tool).inputSchema['examples']).toEqual(tool.examples);
    }
  });

  it('refuses a tool name registered twice', () => {
    const [first] = registry.tools;
    expect(() => registryOf([first!, first!])).toThrow(/registered twice/);
  });
});
