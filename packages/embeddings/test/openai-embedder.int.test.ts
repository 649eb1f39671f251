import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { createOpenAiEmbedder, EmbeddingProviderError } from '../src/index.js';

interface Received {
  readonly authorization?: string;
  readonly body: { model: string; input: string[] };
}

// A real HTTP server on loopback playing an OpenAI-compatible provider; each test scripts its answers.
let server: Server | undefined;
const serve = async (
  answer: (request: Received, count: number, response: ServerResponse) => void,
): Promise<{ url: string; received: Received[] }> => {
  const received: Received[] = [];
  server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      expect(request.url).toBe('/v1/embeddings');
      const entry = {
        authorization: request.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString()) as Received['body'],
      };
      received.push(entry);
      answer(entry, received.length, response);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
};
afterEach(async () => {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

const json = (response: ServerResponse, status: number, body: unknown): void => {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};
/** Embeds text i as [length, i]: distinct per input, so order mistakes show. */
const embeddingsOf = (input: string[]) =>
  // Reversed on purpose: the client must place each vector by its `index`.
  input.map((text, index) => ({ index, embedding: [text.length, index + 1] })).reverse();

describe('OpenAI-compatible embedder', () => {
  it('sends model, key and batches of batchSize, and returns unit vectors in input order', async () => {
    const { url, received } = await serve((request, _count, response) =>
      json(response, 200, { data: embeddingsOf(request.body.input) }),
    );
    const embedder = createOpenAiEmbedder({
      url,
      model: 'nomic-embed-text',
      apiKey: 'sk-test',
      batchSize: 2,
    });
    const vectors = await embedder.embed(['abc', 'de', 'f']);
    expect(received.map((r) => r.body.input)).toEqual([['abc', 'de'], ['f']]);
    expect(
      received.every((r) => r.authorization === 'Bearer sk-test' && r.body.model === 'nomic-embed-text'),
    ).toBe(true);
    const expected = [
      [3, 1],
      [2, 2],
      [1, 1],
    ].map(([a, b]) => [a! / Math.hypot(a!, b!), b! / Math.hypot(a!, b!)]);
    vectors.forEach((vector, i) => {
      expect(vector[0]).toBeCloseTo(expected[i]![0]!, 5);
      expect(vector[1]).toBeCloseTo(expected[i]![1]!, 5);
    });
    expect(embedder.space).toBe(`openai:${url}:nomic-embed-text`);
  });

  it('retries 429 and 5xx with backoff, then succeeds', async () => {
    const { url, received } = await serve((request, count, response) =>
      count === 1
        ? json(response, 503, {})
        : count === 2
          ? json(response, 429, {})
          : json(response, 200, { data: embeddingsOf(request.body.input) }),
    );
    const embedder = createOpenAiEmbedder({ url, model: 'm', attempts: 3, retryDelayMs: 1 });
    expect(await embedder.embed(['x'])).toHaveLength(1);
    expect(received).toHaveLength(3);
  });

  it('gives up after the bounded attempts', async () => {
    const { url, received } = await serve((_request, _count, response) => json(response, 500, {}));
    const embedder = createOpenAiEmbedder({ url, model: 'm', attempts: 2, retryDelayMs: 1 });
    await expect(embedder.embed(['x'])).rejects.toThrow(EmbeddingProviderError);
    expect(received).toHaveLength(2);
  });

  it('does not retry a client error', async () => {
    const { url, received } = await serve((_request, _count, response) =>
      json(response, 401, { error: 'bad key' }),
    );
    const embedder = createOpenAiEmbedder({ url, model: 'm', attempts: 3, retryDelayMs: 1 });
    await expect(embedder.embed(['x'])).rejects.toThrow('answered 401');
    expect(received).toHaveLength(1);
  });

  it('bounds each attempt by the timeout', async () => {
    const { url, received } = await serve(() => {
      // never answers
    });
    // Long enough for each attempt's request to reach the server even on a loaded machine, far below the bound.
    const embedder = createOpenAiEmbedder({ url, model: 'm', timeoutMs: 250, attempts: 2, retryDelayMs: 1 });
    const started = Date.now();
    await expect(embedder.embed(['x'])).rejects.toThrow(EmbeddingProviderError);
    expect(Date.now() - started).toBeLessThan(2_000);
    // The server reads the second request's body after the client gave up on it: wait for it, briefly.
    for (let waited = 0; received.length < 2 && waited < 1_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(received).toHaveLength(2);
  });

  it.each([
    ['a missing data array', {}],
    ['too few embeddings', { data: [] }],
    ['a non-numeric embedding', { data: [{ index: 0, embedding: ['a'] }] }],
    ['an index out of range', { data: [{ index: 3, embedding: [1] }] }],
  ])('rejects %s without retrying', async (_name, body) => {
    const { url, received } = await serve((_request, _count, response) => json(response, 200, body));
    const embedder = createOpenAiEmbedder({ url, model: 'm', retryDelayMs: 1 });
    await expect(embedder.embed(['x'])).rejects.toThrow('embedding provider returned');
    expect(received).toHaveLength(1);
  });

  it('refuses options that would make a call unbounded', () => {
    expect(() => createOpenAiEmbedder({ url: 'http://127.0.0.1:1', model: 'm', timeoutMs: 0 })).toThrow(
      RangeError,
    );
    expect(() => createOpenAiEmbedder({ url: 'http://127.0.0.1:1', model: 'm', batchSize: 0 })).toThrow(
      RangeError,
    );
  });
});
