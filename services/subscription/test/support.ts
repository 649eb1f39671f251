import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Mailer, MailMessage } from '@marketplace/mailer';
import type { NewListing } from '../src/application/ports.js';

/** What a webhook receiver got: arrival time (by the test's clock), method, path, headers and the raw body. */
export interface ReceivedWebhook {
  readonly at: number;
  readonly method: string;
  /** The request target as sent: path and query. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A local webhook receiver answering the statuses it is given, in turn (then 200). */
export class WebhookReceiver {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly received: ReceivedWebhook[],
  ) {}

  static async start(statuses: number[] = [], now: () => number = Date.now): Promise<WebhookReceiver> {
    const answers = [...statuses];
    const received: ReceivedWebhook[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          at: now(),
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.statusCode = answers.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new WebhookReceiver(server, `http://127.0.0.1:${port}/hooks/saved-search`, received);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A Mailer that records what it was asked to send. */
export class RecordingMailer implements Mailer {
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage): Promise<void> {
    this.sent.push(message);
  }
  async close(): Promise<void> {}
}

/** A promoted electronics lot of customer returns at $35 a unit, 600 units: matches the example. */
export const newListing = (overrides: Partial<NewListing['listing']> = {}): NewListing => ({
  eventId: `event-${overrides.productId ?? 'product_1'}`,
  listing: {
    productId: 'product_1',
    sellerAccountId: 7,
    title: 'Wireless earbuds, customer returns',
    description: 'Tested and sorted returns of Bluetooth earbuds',
    category: 'electronics',
    condition: 'customer_returns',
    priceCents: 3_500,
    currency: 'USD',
    quantity: 600,
    minOrderQuantity: 50,
    promotePublicly: true,
    imageUrls: ['/images/abc.jpg'],
    createdAt: Date.UTC(2026, 0, 2),
    ...overrides,
  },
});
