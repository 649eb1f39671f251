import { Router } from 'express';
import type { BlobStore } from '@marketplace/blobstore';
import { notFound } from '@marketplace/platform';
import type { Problems } from './problem.js';
import { methodNotAllowed } from './method-not-allowed.js';

/** Hosted listing images are named by the SHA-256 of their bytes and the format the bytes showed. */
const HOSTED_IMAGE_NAME = /^[0-9a-f]{64}\.(jpg|png|gif|webp)$/;

/** The name never changes its bytes, so caches may keep it forever. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** `GET /images/<sha256>.<ext>`: the images the listing service re-hosted, from the shared BlobStore. */
export const imagesRoutes = (problems: Problems, blobs: BlobStore): Router => {
  const router = Router();
  router
    .route('/images/:name')
    .get(async (req, res) => {
      const { name } = req.params;
      const image = HOSTED_IMAGE_NAME.test(name) ? await blobs.get(name) : undefined;
      if (!image) throw notFound(`no image is hosted at /images/${name}`);
      res.set({ 'content-type': image.contentType, 'cache-control': IMMUTABLE }).send(image.body);
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
