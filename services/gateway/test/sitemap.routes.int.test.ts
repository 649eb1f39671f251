import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { validateXML } from 'xmllint-wasm';
import type { CatalogQueries } from '../src/contexts/catalog/catalog.queries.js';
import { Problems } from '../src/edge/http/problem.js';
import { sitemapRoutes } from '../src/contexts/catalog/sitemap.routes.js';

const PUBLIC_BASE_URL = 'https://market.example.com';

/** A marketplace whose catalog holds no public listing yet: the first minutes of every installation. */
const emptyCatalog = {
  publicProducts: async () => ({ products: [], next_cursor: null }),
} as unknown as CatalogQueries;

describe('the agent sitemap of an empty catalog', () => {
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    const app = express().use(sitemapRoutes(new Problems(PUBLIC_BASE_URL), emptyCatalog, PUBLIC_BASE_URL));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('is valid against the sitemaps.org schema (which wants at least one <url>): it lists the agents guide', async () => {
    const answer = await fetch(`${baseUrl}/agents/sitemap.xml`);
    expect(answer.status).toBe(200);
    const xml = await answer.text();
    const schema = await readFile(new URL('./fixtures/sitemap-0.9.xsd', import.meta.url), 'utf8');
    const validation = await validateXML({ xml: { fileName: 'sitemap.xml', contents: xml }, schema });
    expect(validation.errors).toEqual([]);
    expect(validation.valid).toBe(true);
    expect(xml).toContain(`<loc>${PUBLIC_BASE_URL}/llms.txt</loc>`);
  });
});
