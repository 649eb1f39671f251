import { Client } from '@elastic/elasticsearch';
import {
  createElasticsearchSearchIndex,
  type ElasticsearchSearchIndex,
} from './elasticsearch-search-index.js';
import {
  createElasticsearchVectorIndex,
  type ElasticsearchVectorIndex,
} from './vector/elasticsearch-vector-index.js';

/** The text index and, when asked, the vector index of one cluster, on a client of their own. */
export interface ConnectedElasticsearch<P> {
  readonly text: ElasticsearchSearchIndex<P>;
  readonly vectors?: ElasticsearchVectorIndex<P>;
  /** Ends the client. */
  close(): Promise<void>;
}

/**
 * Connects to `url` and opens the text index behind `alias` and, with `vectors`, the vector index behind its own
 * alias (a separate index: see `createElasticsearchVectorIndex`); a failure to open either ends the client.
 */
export const connectElasticsearch = async <P>(options: {
  readonly url: string;
  readonly alias: string;
  readonly vectors?: { readonly alias: string; readonly dimensions: number };
  readonly requestTimeoutMs?: number;
}): Promise<ConnectedElasticsearch<P>> => {
  const client = new Client({ node: options.url, requestTimeout: options.requestTimeoutMs ?? 10_000 });
  const shared = {
    client,
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
  };
  try {
    const text = await createElasticsearchSearchIndex<P>({ ...shared, alias: options.alias });
    const vectors =
      options.vectors && (await createElasticsearchVectorIndex<P>({ ...shared, ...options.vectors }));
    return { text, ...(vectors ? { vectors } : {}), close: () => client.close() };
  } catch (error) {
    await client.close();
    throw error;
  }
};
