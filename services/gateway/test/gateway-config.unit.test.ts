import { describe, expect, it } from '@jest/globals';
import { gatewayConfigSchema } from '../src/edge/gateway.config.js';
import { importPacingOf } from '../src/edge/import-pacing.config.js';
import { DEFAULT_CHUNK_PLAN_LIMITS } from '../src/contexts/listings/imports/chunk-plan.js';

describe('the gateway configuration', () => {
  it('takes a service address as host:port, a DNS name or a list of addresses, which it balances over', () => {
    const config = gatewayConfigSchema.parse({
      LISTING_GRPC_ADDR: 'listing:50051',
      CATALOG_GRPC_ADDR: 'dns:///marketplace-catalog-pods.marketplace.svc:50052',
      QUOTE_GRPC_ADDR: 'ipv4:127.0.0.1:50053,127.0.0.1:50063',
    });

    expect(config.LISTING_GRPC_ADDR).toBe('listing:50051');
    expect(config.CATALOG_GRPC_ADDR).toBe('dns:///marketplace-catalog-pods.marketplace.svc:50052');
    expect(config.QUOTE_GRPC_ADDR).toBe('ipv4:127.0.0.1:50053,127.0.0.1:50063');
  });

  it.each(['dns://catalog:50052', 'catalog', 'http://catalog:50052', 'ipv4:127.0.0.1:1,'])(
    'refuses %s, naming the variable',
    (address) => {
      const result = gatewayConfigSchema.safeParse({ CATALOG_GRPC_ADDR: address });

      expect(result.success).toBe(false);
      expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['CATALOG_GRPC_ADDR']);
    },
  );

  it('takes SIGNING_KEY_PEM only as a PEM private key, naming the variable otherwise', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n';
    expect(gatewayConfigSchema.parse({ SIGNING_KEY_PEM: pem }).SIGNING_KEY_PEM).toBe(pem);

    const result = gatewayConfigSchema.safeParse({ SIGNING_KEY_PEM: 'not-a-key' });

    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['SIGNING_KEY_PEM']);
  });

  it('takes IMPORT_REST_SHARE as the import\'s rest share, defaulting to the plan\'s (docs/imports.md, "Pacing")', () => {
    expect(gatewayConfigSchema.parse({}).IMPORT_REST_SHARE).toBe(DEFAULT_CHUNK_PLAN_LIMITS.restShare);
    const config = gatewayConfigSchema.parse({ IMPORT_REST_SHARE: '0.5' });

    const pacing = importPacingOf(config.IMPORT_REST_SHARE);

    expect(pacing.limits).toEqual({ ...DEFAULT_CHUNK_PLAN_LIMITS, restShare: 0.5 });
    expect(importPacingOf().limits).toEqual(DEFAULT_CHUNK_PLAN_LIMITS);
  });

  it.each(['-1', '51', 'fast', 'NaN'])('refuses IMPORT_REST_SHARE=%s, naming the variable', (share) => {
    const result = gatewayConfigSchema.safeParse({ IMPORT_REST_SHARE: share });

    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['IMPORT_REST_SHARE']);
  });
});
