import type { Embedder } from '@marketplace/embeddings';
import { normalize } from '@marketplace/embeddings';

/**
 * A deterministic embedder for tests: each word of a small vocabulary points along its concept's axis, so
 * "cordless drill" and "power tool for screws" meet on `tools` without sharing a word. Counts the texts it
 * embedded, and can be told to fail, like a remote provider that is down.
 */
export interface ConceptEmbedder extends Embedder {
  readonly embedded: string[];
  failing: boolean;
}

const CONCEPTS: Record<string, number> = {
  drill: 0,
  drills: 0,
  screws: 0,
  tool: 0,
  bits: 0,
  toy: 1,
  kids: 1,
  children: 1,
  plaything: 1,
  charger: 2,
  chargers: 2,
  power: 2,
  usb: 2,
};
const DIMENSIONS = 4;

export const conceptEmbedder = (): ConceptEmbedder => {
  const embedder: ConceptEmbedder = {
    space: 'test:concepts:v1',
    embedded: [],
    failing: false,
    async embed(texts) {
      if (embedder.failing) throw new Error('embedding provider down');
      embedder.embedded.push(...texts);
      return texts.map((text) => {
        const vector = new Float32Array(DIMENSIONS);
        for (const word of text.toLowerCase().split(/[^a-z0-9]+/)) {
          const axis = CONCEPTS[word];
          if (axis !== undefined) vector[axis] = vector[axis]! + 1;
        }
        // Every text leans a little on the last axis, so unrelated texts are similar but not identical.
        vector[DIMENSIONS - 1] = 0.1;
        return normalize(vector);
      });
    },
  };
  return embedder;
};
