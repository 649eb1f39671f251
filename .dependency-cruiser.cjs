/**
 * The layering rules of docs/architecture.md, checked on every `pnpm test` (`pnpm run depcheck`).
 * dependency-cruiser resolves TypeScript paths and workspace links, so `@marketplace/<service>` counts as the
 * service it names.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-service-imports-another',
      comment: 'Services share packages/ and proto/ only; each is deployed alone.',
      severity: 'error',
      from: { path: '^services/([^/]+)/' },
      to: { path: '^services/', pathNot: ['^services/$1/'] },
    },
    {
      name: 'packages-import-no-service',
      comment: 'Shared packages sit below every service.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^services/' },
    },
    {
      name: 'domain-imports-nothing-outer',
      comment: 'Domain code is pure: deciders, rules and their types.',
      severity: 'error',
      from: { path: '^services/[^/]+/src/domain/' },
      to: { path: '^services/[^/]+/src/(application|adapters|transport|http|mcp|clients)/' },
    },
    {
      name: 'application-imports-no-adapter',
      comment: 'Application code depends on ports; the composition root wires adapters in.',
      severity: 'error',
      from: { path: '^services/[^/]+/src/application/' },
      to: { path: '^services/[^/]+/src/adapters/' },
    },
    {
      name: 'gateway-context-domain-imports-nothing-outer',
      comment:
        'Domain code of a gateway context is pure: it imports neither its operations nor its adapters.',
      severity: 'error',
      from: { path: '^services/gateway/src/contexts/([^/]+)/domain/' },
      to: { path: '^services/gateway/src/contexts/$1/(adapters/|[^/]+$)' },
    },
    {
      name: 'gateway-context-imports-no-adapter',
      comment: 'A gateway context depends on ports; edge/gateway.service.ts wires its adapters in.',
      severity: 'error',
      from: { path: '^services/gateway/src/contexts/([^/]+)/[^/]+$' },
      to: { path: '^services/gateway/src/contexts/$1/adapters/' },
    },
    {
      name: 'gateway-context-imports-only-edge',
      comment:
        'A gateway context (src/contexts/<name>/) imports its own folder and the shared edge/ only, never another ' +
        'context: a new route or tool touches one folder (docs/architecture.md, "Gateway").',
      severity: 'error',
      from: { path: '^services/gateway/src/contexts/([^/]+)/' },
      to: {
        path: '^services/gateway/src/',
        pathNot: ['^services/gateway/src/contexts/$1/', '^services/gateway/src/edge/'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
};
