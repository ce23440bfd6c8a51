/**
 * `npm run config-schema`: writes config/pipeline.schema.json from the zod schemas
 * (lib/config/json-schema.ts), each setting described by its prop's TSDoc (scripts/prop-docs.ts), so
 * an editor shows the same text on a configuration file's setting as on the construct's prop.
 * test/config/json-schema.test.ts fails while the file differs.
 */
import { writeFileSync } from 'node:fs';
import { CONFIG_SCHEMA_FILE, pipelineConfigJsonSchema } from '../lib/config/json-schema.ts';
import { PROP_NAMES } from '../lib/construct/props-to-config.ts';
import { type SchemaNode, settingDocs } from './prop-docs.ts';

/** The schema with each documented setting's description: its prop's TSDoc, and the file's unit. */
export function describedConfigSchema(): SchemaNode {
  const schema = pipelineConfigJsonSchema() as SchemaNode;
  for (const [setting, doc] of settingDocs(schema)) {
    const unit = PROP_NAMES[setting.replace(/^.*\./, '')]?.unit;
    const prop =
      doc.prop === setting
        ? ''
        : ` (The prop \`${doc.prop}\`${unit === undefined ? '' : `; here in ${unit}`}.)`;
    doc.node.description = `${doc.description}${prop}`;
  }
  return schema;
}

/** The file's text: two-space JSON with a final newline, as Biome formats it. */
export function configSchemaText(): string {
  return `${JSON.stringify(describedConfigSchema(), null, 2)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(new URL(`../${CONFIG_SCHEMA_FILE}`, import.meta.url), configSchemaText());
  console.log(`wrote ${CONFIG_SCHEMA_FILE}`);
}
