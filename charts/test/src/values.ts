import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR } from './render.js';

type Values = Record<string, unknown>;

const isMap = (value: unknown): value is Values =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Helm's merge of values: maps merge key by key, anything else (lists included) replaces. */
export const mergeValues = (base: Values, override: Values): Values => {
  const merged: Values = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = isMap(current) && isMap(value) ? mergeValues(current, value) : value;
  }
  return merged;
};

export const readValuesFile = (path: string): Values =>
  (parse(readFileSync(path, 'utf8')) as Values | null) ?? {};

/** The chart's values.yaml with the given files applied in order, as Helm validates them. */
export const chartValues = (...files: readonly string[]): Values =>
  files.map(readValuesFile).reduce(mergeValues, readValuesFile(join(CHART_DIR, 'values.yaml')));

export const valuesSchema = (): object =>
  JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
