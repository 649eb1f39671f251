import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { Problems } from '../src/edge/http/problem.js';
import { answerUnparsableRequests, offendingHeaderOf } from '../src/edge/http/unparsable-requests.js';

/** Sends `raw` on a connection of its own and answers what came back until the server closed it. */
const sendRaw = async (port: number, raw: string | Buffer): Promise<string> => {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  socket.write(raw);
  await once(socket, 'close');
  return answer;
};

const bodyOf = (answer: string): unknown => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

describe('requests the HTTP parser refuses', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((_req, res) => res.end('ok'));
    answerUnparsableRequests(server, new Problems('https://market.example'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.close();
    await once(server, 'close');
  });

  it('answer a 400 problem naming the header that holds a NUL or another control character', async () => {
    for (const value of ['abc\u0000def', 'a\u0001b', 'tab\tthen\u007f']) {
      const answer = await sendRaw(
        port,
        Buffer.from(
          `POST /api/products/imports HTTP/1.1\r\nHost: x\r\nIdempotency-Key: ${value}\r\n\r\n`,
          'latin1',
        ),
      );
      expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(answer).toContain('Content-Type: application/problem+json');
      expect(bodyOf(answer)).toEqual({
        type: 'https://market.example/problems/validation-error',
        title: 'Invalid request',
        status: 400,
        detail: expect.stringContaining('Idempotency-Key header'),
        errors: [{ path: 'Idempotency-Key', message: 'must not hold control characters' }],
      });
    }
  });

  it('names a header whose name is not a token, without echoing what is not', async () => {
    const answer = await sendRaw(port, 'GET / HTTP/1.1\r\nHost: x\r\nBad Name<script>: 1\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(answer)).toMatchObject({ errors: [{ path: 'Bad?Name?script?' }] });
  });

  it('answers a 400 problem without a field for a malformed request line', async () => {
    const answer = await sendRaw(port, 'NOT A REQUEST\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(answer)).toMatchObject({ status: 400, detail: expect.stringContaining('request line') });
    expect(bodyOf(answer)).not.toHaveProperty('errors');
  });

  it("keeps Node's bare 431 for headers over the limit", async () => {
    const answer = await sendRaw(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(answer).toContain('Content-Length: 0');
  });

  it('still serves a well-formed request on a connection of its own', async () => {
    expect(await sendRaw(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(
      /^HTTP\/1\.1 200 /,
    );
  });
});

describe('offendingHeaderOf', () => {
  it('finds the first header line holding a forbidden character, or none', () => {
    expect(offendingHeaderOf(Buffer.from('GET / HTTP/1.1\r\nA: 1\r\nB: x\u0000\r\n\r\n', 'latin1'))).toBe(
      'B',
    );
    expect(offendingHeaderOf(Buffer.from('GET / HTTP/1.1\r\nA: 1\r\n\r\n'))).toBeUndefined();
    expect(offendingHeaderOf(undefined)).toBeUndefined();
    expect(
      offendingHeaderOf(Buffer.from(`GET / HTTP/1.1\r\n${'N'.repeat(100)}: \u0001\r\n\r\n`)),
    ).toHaveLength(64);
  });
});
