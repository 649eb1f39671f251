import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
