import { z } from 'zod';
import type { ImportPacing } from '../contexts/listings/imports/pace-import.js';
import { DEFAULT_IMPORT_PACING } from '../contexts/listings/imports/pace-import.js';

/**
 * How much of the machine an import takes while other requests are served (docs/imports.md, "Pacing"): the
 * worker rests this many times each chunk's window before the next chunk. The default suits services that share
 * cores; where they have cores of their own, a smaller share imports faster. 0 never rests.
 */
export const importPacingConfigSchema = z.object({
  IMPORT_REST_SHARE: z.coerce.number().min(0).max(50).default(DEFAULT_IMPORT_PACING.limits.restShare),
});

/** The import worker's pacing with the configured rest share. */
export const importPacingOf = (restShare = DEFAULT_IMPORT_PACING.limits.restShare): ImportPacing => ({
  ...DEFAULT_IMPORT_PACING,
  limits: { ...DEFAULT_IMPORT_PACING.limits, restShare },
});
