import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createFilesystemBlobStore } from '@marketplace/blobstore';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { CapturedLog, TestGateway, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

const HASH = 'a'.repeat(64);

describe.each(testEngines().slice(0, 1))('GET /images/<sha256>.<ext>', ({ create }) => {
  const images = createFilesystemBlobStore(mkdtempSync(join(tmpdir(), 'gateway-images-')));
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;

  beforeAll(async () => {
    db = await create();
    backends = await InMemoryBackends.start(new CapturedLog().logger);
    gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
      images,
    });
    await images.put(`${HASH}.webp`, Buffer.from('RIFF....WEBP'), 'image/webp');
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backends?.stop();
    await db?.close();
  });

  it('serves a hosted image with its content type and an immutable, year-long cache', async () => {
    const response = await fetch(`${gateway.baseUrl}/images/${HASH}.webp`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/webp');
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await response.arrayBuffer()).toString()).toBe('RIFF....WEBP');
  });

  it.each([`${'b'.repeat(64)}.png`, `${HASH}.svg`, 'anything.png', '..%2F..%2Fetc%2Fpasswd'])(
    'answers 404 as a problem for /images/%s',
    async (name) => {
      const answer = await gateway.call(`/images/${name}`);
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    },
  );

  it('allows only GET', async () => {
    expect((await gateway.call(`/images/${HASH}.webp`, { method: 'DELETE' })).status).toBe(405);
  });
});
