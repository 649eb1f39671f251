import { quoteIdent } from '@marketplace/database';
import type { Queryable } from '@marketplace/database';

/** A listing's embedding, valid while its text (by hash) and the embedder's space are unchanged. */
export interface StoredEmbedding {
  readonly productId: string;
  /** The `Embedder.space` that computed it: vectors of two spaces are never compared. */
  readonly space: string;
  readonly textSha256: string;
  readonly vector: Float32Array;
}

export interface ProductEmbeddingsTable {
  findMany(db: Queryable, productIds: readonly string[]): Promise<Map<string, StoredEmbedding>>;
  saveMany(db: Queryable, embeddings: readonly StoredEmbedding[]): Promise<void>;
}

/** Rows per insert: 4 parameters each, far below PostgreSQL's 65,535. */
const SAVE_BATCH = 500;

const bytesOf = (vector: Float32Array): Buffer =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

/** node-postgres answers a Buffer, PGlite a Uint8Array; either may be unaligned for a Float32Array view. */
const vectorOf = (bytes: Uint8Array): Float32Array => new Float32Array(Uint8Array.from(bytes).buffer);

/** The catalog's store of listing embeddings (table `product_embeddings`, migration catalog-005). */
export const productEmbeddingsTable = (schema: string): ProductEmbeddingsTable => {
  const table = `${quoteIdent(schema)}.product_embeddings`;
  return {
    async findMany(db, productIds) {
      if (productIds.length === 0) return new Map();
      const { rows } = await db.query<{
        product_id: string;
        space: string;
        text_sha256: string;
        vector: Uint8Array;
      }>(`select product_id, space, text_sha256, vector from ${table} where product_id = any($1::text[])`, [
        productIds,
      ]);
      return new Map(
        rows.map((row) => [
          row.product_id,
          {
            productId: row.product_id,
            space: row.space,
            textSha256: row.text_sha256,
            vector: vectorOf(row.vector),
          },
        ]),
      );
    },
    async saveMany(db, embeddings) {
      for (let start = 0; start < embeddings.length; start += SAVE_BATCH) {
        const batch = embeddings.slice(start, start + SAVE_BATCH);
        const values = batch.map((_, i) => `($${4 * i + 1}, $${4 * i + 2}, $${4 * i + 3}, $${4 * i + 4})`);
        await db.query(
          `insert into ${table} (product_id, space, text_sha256, vector) values ${values.join(', ')}
           on conflict (product_id) do update
             set space = excluded.space, text_sha256 = excluded.text_sha256, vector = excluded.vector`,
          batch.flatMap((embedding) => [
            embedding.productId,
            embedding.space,
            embedding.textSha256,
            bytesOf(embedding.vector),
          ]),
        );
      }
    },
  };
};
