import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { verifyWithJwk, type SigningJwk } from '@marketplace/platform';

export interface ReceivedWebhook {
  readonly at: number;
  readonly method: string;
  /** The request target as sent: path and query. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A subscriber's webhook endpoint on loopback: records every POST and answers 204. */
export class WebhookReceiver {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly received: ReceivedWebhook[],
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const received: ReceivedWebhook[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          at: Date.now(),
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new WebhookReceiver(server, `http://127.0.0.1:${port}/webhooks`, received);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A UCP platform's check of a webhook's RFC 9421 signature (docs/agents.md, "Signing key"), from what arrived
 * and a published JWK only: the components Signature-Input names, rebuilt from the request, and the body digest.
 */
export const verifiesWithJwk = (delivery: ReceivedWebhook, jwk: SigningJwk): boolean => {
  const input = /^sig1=(\(([^)]*)\);created=\d+;keyid="([^"]+)")$/.exec(
    String(delivery.headers['signature-input']),
  );
  const signature = /^sig1=:([A-Za-z0-9+/=]+):$/.exec(String(delivery.headers['signature']));
  if (!input || !signature || input[3] !== jwk.kid) return false;
  const digest = `sha-256=:${createHash('sha256').update(delivery.body).digest('base64')}:`;
  if (delivery.headers['content-digest'] !== digest) return false;
  const url = new URL(delivery.path, 'http://receiver.invalid');
  const valueOf = (component: string): string =>
    ({
      '@method': delivery.method,
      '@authority': String(delivery.headers.host),
      '@path': url.pathname,
      '@query': url.search,
    })[component] ?? String(delivery.headers[component]);
  const components = input[2]!.split(' ').map((quoted) => quoted.slice(1, -1));
  const base = [
    ...components.map((component) => `"${component}": ${valueOf(component)}`),
    `"@signature-params": ${input[1]}`,
  ].join('\n');
  return verifyWithJwk(jwk, base, Buffer.from(signature[1]!, 'base64'));
};
