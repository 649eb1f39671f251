import type { RequestHandler, Response } from 'express';
import { JSON_RPC, jsonRpcErrorResponse } from './json-rpc-error.js';

/** How a refused request is answered: a JSON-RPC error on the JSON-RPC routes, a problem document elsewhere. */
export type Refuse = (res: Response, message: string) => void;

export const refuseWithJsonRpcError: Refuse = (res, message) => {
  res.status(403).json(jsonRpcErrorResponse(null, JSON_RPC.serverError, message));
};

const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

const hostnameOf = (host: string): string | undefined => {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
};

/**
 * DNS-rebinding protection the MCP transport specification asks for, in a form that works behind a proxy.
 * Host: the public host of PUBLIC_BASE_URL (its host:port) or a loopback name on any port; behind a trusted
 * proxy (`behindProxy`) that sends X-Forwarded-Host, its first value counts instead of Host. Origin (sent by browsers only): absent, or
 * the origin of PUBLIC_BASE_URL, or a loopback origin. Anything else is 403 before any work is done.
 */
export const originGuard = (
  publicBaseUrl: string,
  refuse: Refuse = refuseWithJsonRpcError,
  { behindProxy = false }: { behindProxy?: boolean } = {},
): RequestHandler => {
  const publicUrl = new URL(publicBaseUrl);
  const allowedHost = (host: string | undefined): boolean => {
    if (host === undefined || host === '') return false;
    if (host.toLowerCase() === publicUrl.host) return true;
    const hostname = hostnameOf(host);
    return hostname !== undefined && LOOPBACK_HOSTNAMES.has(hostname);
  };
  const allowedOrigin = (origin: string): boolean => {
    if (origin === publicUrl.origin) return true;
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTNAMES.has(url.hostname);
    } catch {
      return false;
    }
  };
  return (req, res, next) => {
    // Only a proxy the operator declared (TRUST_PROXY_HOPS) may speak for the Host: without one, any client
    // could send X-Forwarded-Host: localhost.
    const forwardedHost = behindProxy ? req.get('x-forwarded-host')?.split(',')[0]?.trim() : undefined;
    if (!allowedHost(forwardedHost ?? req.get('host'))) {
      refuse(res, 'Forbidden: unknown Host header');
      return;
    }
    const origin = req.get('origin');
    if (origin !== undefined && !allowedOrigin(origin)) {
      refuse(res, `Forbidden: origin ${origin}`);
      return;
    }
    next();
  };
};
