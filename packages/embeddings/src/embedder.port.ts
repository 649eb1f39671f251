/**
 * Turns texts into vectors whose cosine similarity reflects meaning. Every adapter returns unit-length vectors
 * (so a dot product is the cosine), one per input, in input order.
 */
export interface Embedder {
  /**
   * Names the vector space (provider, model and dimensions). Stored next to persisted vectors: vectors of
   * different spaces are never compared, so a change of model means re-embedding, not wrong answers.
   */
  readonly space: string;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Scales `vector` in place to unit length; a zero vector stays zero (it is similar to nothing). */
export const normalize = (vector: Float32Array): Float32Array => {
  let sumOfSquares = 0;
  for (const value of vector) sumOfSquares += value * value;
  if (sumOfSquares === 0) return vector;
  const inverseNorm = 1 / Math.sqrt(sumOfSquares);
  for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! * inverseNorm;
  return vector;
};
