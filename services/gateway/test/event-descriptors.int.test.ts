import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_DESCRIPTORS } from '../src/edge/discovery/asyncapi.descriptors.generated.js';

const gatewayDir = join(fileURLToPath(import.meta.url), '..', '..');

/** /asyncapi.json is generated from the event protos through a committed descriptor file: it must be current. */
describe('event descriptors', () => {
  it('match what the generator makes from proto/ now (run generate:events after changing an event proto)', () => {
    const fresh = join(mkdtempSync(join(tmpdir(), 'descriptors-')), 'descriptors.ts');
    execFileSync(process.execPath, [join(gatewayDir, 'scripts', 'generate-event-descriptors.mjs'), fresh], {
      stdio: 'pipe',
    });
    // Compared as data, so formatting the committed file (prettier) does not matter.
    const text = readFileSync(fresh, 'utf8');
    const json = text.slice(text.indexOf('= ') + 2, text.lastIndexOf(';'));
    expect(EVENT_DESCRIPTORS).toEqual(JSON.parse(json));
  });
});
