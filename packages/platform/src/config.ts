import { z } from 'zod';

/** Thrown at start-up when an environment variable is missing or malformed; names the variable. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly { variable: string; message: string }[]) {
    super(`invalid configuration: ${problems.map((p) => `${p.variable}: ${p.message}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses environment variables once, at start-up, with a zod object schema whose keys are the variable
 * names. Empty strings count as unset, so `FOO= pnpm start` behaves like leaving FOO out.
 */
export const parseEnv = <S extends z.ZodObject>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> => {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const result = schema.safeParse(present);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => ({
      variable: issue.path.join('.') || '(env)',
      message: issue.message,
    })),
  );
};

/** Reusable variable schemas. */
export const envPort = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback);
/**
 * Where a gRPC service is reached: `host:port`; `dns:///host:port`, every address the name resolves to (a
 * headless Service's pods); or `ipv4:ip:port,ip:port`, a fixed list of replicas. The client balances over the
 * addresses round robin (@marketplace/rpc, replica-balancing.ts).
 */
export const envGrpcTarget = (defaultPort: number) =>
  z
    .string()
    .regex(
      /^((dns:\/\/\/)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}|ipv4:[0-9.]+:[0-9]{1,5}(,[0-9.]+:[0-9]{1,5})*)$/,
      'must be host:port, dns:///host:port or ipv4:ip:port,ip:port',
    )
    .default(`127.0.0.1:${defaultPort}`);
export const envUrl = () => z.url();
export const envList = () =>
  z.string().transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

/** The marketplace's public address when none is configured: the gateway's default port on this machine. */
export const DEFAULT_PUBLIC_BASE_URL = 'http://localhost:8080';

/** `{base_url}` of links in emails and pages: the configured one without trailing slashes, or the default. */
export const publicBaseUrlOf = (configured: string | undefined): string =>
  (configured ?? DEFAULT_PUBLIC_BASE_URL).replace(/\/+$/, '');
