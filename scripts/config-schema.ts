/**
 * `npm run config-schema`: writes config/pipeline.schema.json from the zod schemas
 * (lib/config/json-schema.ts). test/config/json-schema.test.ts fails while the file differs.
 */
import { writeFileSync } from 'node:fs';
import { CONFIG_SCHEMA_FILE, pipelineConfigJsonSchema } from '../lib/config/json-schema.ts';

/** The file's text: two-space JSON with a final newline, as Biome formats it. */
export function configSchemaText(): string {
  return `${JSON.stringify(pipelineConfigJsonSchema(), null, 2)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(new URL(`../${CONFIG_SCHEMA_FILE}`, import.meta.url), configSchemaText());
  console.log(`wrote ${CONFIG_SCHEMA_FILE}`);
}
