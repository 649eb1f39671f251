// Shared jest settings: TypeScript through swc into native ESM, workspace packages resolved to their
// sources (the "source" export condition) so tests never depend on a stale build.
import { fileURLToPath } from 'node:url';

/** Jest's node environment with an ordinary global object (jest.environment.cjs explains why). */
const testEnvironment = fileURLToPath(new URL('./jest.environment.cjs', import.meta.url));

/** @param {string} displayName */
export function jestConfig(displayName) {
  return {
    displayName,
    testEnvironment,
    roots: ['<rootDir>'],
    testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    testMatch: ['**/*.test.ts'],
    extensionsToTreatAsEsm: ['.ts'],
    transform: {
      '^.+\\.ts$': [
        '@swc/jest',
        {
          jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
          module: { type: 'es6' },
          sourceMaps: 'inline',
        },
      ],
    },
    // The "source" condition below also reaches third-party packages that publish TypeScript sources under it
    // (eventsource-parser, used by the MCP SDK client): those are compiled like ours instead of being skipped.
    transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/)?eventsource-parser)'],
    moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    testEnvironmentOptions: { customExportConditions: ['source', 'node', 'node-addons'] },
  };
}
