/**
 * config/pipeline.schema.json is the JSON Schema of a configuration file, generated from the zod
 * schemas that validate it (`npm run config-schema`). It must be what the generator writes today,
 * name exactly the settings zod knows, and agree with zod on what is a well-formed file.
 */
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import { CONFIG_SCHEMA_FILE } from '../../lib/config/json-schema.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { rootSchema, scanSchema, vendorSchema } from '../../lib/config/schema.ts';
import { stackSchema } from '../../lib/config/stack-schema.ts';
import { configSchemaText } from '../../scripts/config-schema.ts';

const committed = readFileSync(new URL(`../../${CONFIG_SCHEMA_FILE}`, import.meta.url), 'utf8');
const schema = JSON.parse(committed) as {
  properties: Record<string, { properties?: Record<string, unknown> }>;
  additionalProperties: boolean;
};
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);
const example: unknown = JSON.parse(
  readFileSync(new URL('../../config/pipeline.example.json', import.meta.url), 'utf8'),
);

/** The setting names of a section schema (an object, or an object piped into a transform). */
function keysOf(section: z.ZodMiniType): string[] {
  const def = section.def as { type: string; shape?: object; in?: z.ZodMiniType };
  if (def.type === 'pipe' && def.in !== undefined) return keysOf(def.in);
  return Object.keys(def.shape ?? {}).sort();
}

describe('config/pipeline.schema.json', () => {
  it('is what npm run config-schema writes from the zod schemas today', () => {
    expect(committed).toBe(configSchemaText());
  });

  it('names exactly the sections and settings the zod schemas know, and nothing else', () => {
    expect(Object.keys(schema.properties).sort()).toEqual(keysOf(rootSchema));
    expect(schema.additionalProperties).toBe(false);
    for (const [name, section] of [
      ['vendor', vendorSchema],
      ['stack', stackSchema],
      ['scan', scanSchema],
    ] as const) {
      expect(Object.keys(schema.properties[name]?.properties ?? {}).sort(), name).toEqual(keysOf(section));
    }
  });

  it('is the example file’s $schema, and the example passes it and the zod schemas', () => {
    expect((example as { $schema: string }).$schema).toBe('./pipeline.schema.json');
    expect(validate(example) ? [] : validate.errors).toEqual([]);
    expect(() => parsePipelineConfig(example, 'example')).not.toThrow();
  });

  it.each([
    ['a misspelt section', { vendr: {} }, /pipeline\.vendr/],
    ['a misspelt setting', { poll: { minWait: 5 } }, /pipeline\.poll\.minWait/],
    ['a string for a number', { poll: { minWaitSeconds: '5' } }, /pipeline\.poll\.minWaitSeconds/],
    ['an unknown key mode', { vendor: { keys: 'many' } }, /pipeline\.vendor\.keys/],
    ['a section that is not an object', { stack: 'dev' }, /pipeline\.stack/],
  ])('refuses %s, as zod does', (_case, file, setting) => {
    expect(validate(file)).toBe(false);
    expect(() => parsePipelineConfig(file, 'test')).toThrow(setting);
  });
});
