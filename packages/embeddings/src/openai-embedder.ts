import { normalize, type Embedder } from './embedder.port.js';

export interface OpenAiEmbedderOptions {
  /** Base URL of the server; `/v1/embeddings` is appended (OpenAI, Ollama, vLLM, text-embeddings-inference). */
  readonly url: string;
  readonly model: string;
  readonly apiKey?: string;
  /** Bound on each HTTP attempt. */
  readonly timeoutMs?: number;
  /** Inputs per request; servers cap it (OpenAI at 2,048, text-embeddings-inference at 32 by default). */
  readonly batchSize?: number;
  /** Attempts per batch, the first included; only network errors, timeouts, 429 and 5xx are retried. */
  readonly attempts?: number;
  /** Delay before the second attempt; doubled for each later one. */
  readonly retryDelayMs?: number;
}

const DEFAULTS = { timeoutMs: 10_000, batchSize: 32, attempts: 3, retryDelayMs: 200 };

/** Thrown when the provider fails for good: a 4xx other than 429, a malformed answer, or retries exhausted. */
export class EmbeddingProviderError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingProviderError';
  }
}

class RetryableError extends EmbeddingProviderError {}

/**
 * An embedder calling an OpenAI-compatible `POST /v1/embeddings`. Texts go in batches of `batchSize`; each
 * attempt is bounded by `timeoutMs`, and a failed batch is retried with exponential backoff up to `attempts`
 * times, so one call is bounded by attempts × (timeout + backoff) per batch.
 */
export const createOpenAiEmbedder = (options: OpenAiEmbedderOptions): Embedder => {
  const settings = { ...DEFAULTS, ...options };
  for (const key of ['timeoutMs', 'batchSize', 'attempts'] as const) {
    if (!Number.isInteger(settings[key]) || settings[key] < 1)
      throw new RangeError(`${key} must be a positive integer`);
  }
  const endpoint = new URL('v1/embeddings', options.url.endsWith('/') ? options.url : `${options.url}/`);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  const requestOnce = async (batch: readonly string[]): Promise<Float32Array[]> => {
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: options.model, input: batch }),
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
    } catch (error) {
      throw new RetryableError(`embedding request to ${endpoint.origin} failed`, { cause: error });
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (response.status === 429 || response.status >= 500) {
      throw new RetryableError(`embedding provider answered ${response.status}`);
    }
    if (!response.ok) throw new EmbeddingProviderError(`embedding provider answered ${response.status}`);
    return vectorsOf(body, batch.length);
  };

  const requestWithRetries = async (batch: readonly string[]): Promise<Float32Array[]> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await requestOnce(batch);
      } catch (error) {
        if (!(error instanceof RetryableError) || attempt >= settings.attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, settings.retryDelayMs * 2 ** (attempt - 1)));
      }
    }
  };

  return {
    space: `openai:${endpoint.origin}:${options.model}`,
    embed: async (texts) => {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += settings.batchSize) {
        vectors.push(...(await requestWithRetries(texts.slice(start, start + settings.batchSize))));
      }
      return vectors;
    },
  };
};

/** `{ data: [{ index, embedding: number[] }] }`, in any order; checked, since the server is not ours. */
const vectorsOf = (body: unknown, expected: number): Float32Array[] => {
  const data = (body as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data) || data.length !== expected) {
    throw new EmbeddingProviderError(`embedding provider returned no data for ${expected} inputs`);
  }
  const vectors = new Array<Float32Array>(expected);
  for (const item of data as { index?: unknown; embedding?: unknown }[]) {
    const { index, embedding } = item;
    if (
      typeof index !== 'number' ||
      !Number.isInteger(index) ||
      index < 0 ||
      index >= expected ||
      vectors[index] !== undefined ||
      !Array.isArray(embedding) ||
      embedding.length === 0 ||
      !embedding.every((value) => typeof value === 'number' && Number.isFinite(value))
    ) {
      throw new EmbeddingProviderError('embedding provider returned a malformed embedding');
    }
    vectors[index] = normalize(Float32Array.from(embedding as number[]));
  }
  return vectors;
};
