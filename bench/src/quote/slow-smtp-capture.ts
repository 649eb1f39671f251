import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SlowSmtpCapture {
  /** `smtp://127.0.0.1:<port>`, for `SMTP_URL`. */
  readonly url: string;
  /** Messages accepted so far. */
  received(): number;
  close(): Promise<void>;
}

/**
 * A local SMTP server that accepts every message after `delayMs` (a slow mail server's exchange) and counts them:
 * what the quote requests must not wait on.
 */
export const startSlowSmtpCapture = async (delayMs: number): Promise<SlowSmtpCapture> => {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () =>
        setTimeout(() => {
          received++;
          callback();
        }, delayMs),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
