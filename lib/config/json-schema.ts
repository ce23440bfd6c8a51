/**
 * The JSON Schema of a configuration file, generated from the same zod schemas that validate it
 * (zod 4's `toJSONSchema`), so editors complete and check `config/pipeline.json` with the rules
 * the synth applies. `config/pipeline.schema.json` is this, written by `npm run config-schema`;
 * a test holds the two equal.
 *
 * The schema carries each setting's shape, bounds and default. Rules zod states as code (a cron
 * expression's grammar, a schedule naming a known list, a key within its Lambda's limits) are not
 * JSON Schema; `npm run check-config` applies those too.
 */
import * as z from 'zod/mini';
import { alarmsSchema } from './alarms-schema.ts';
import { breachSchema } from './breach-schema.ts';
import { notificationsSchema } from './notifications-schema.ts';
import { rotationSchema } from './rotation-schema.ts';
import {
  domainListSchema,
  intakeSchema,
  lambdaRuntimeSchema,
  lambdaSourceMapsSchema,
  logRetentionDaysSchema,
  pollSchema,
  removalPolicySchema,
  scanSchema,
  scheduleSchema,
  vendorSchema,
} from './schema.ts';
import { stackSchema } from './stack-schema.ts';

/** Where the committed schema lives, relative to the repository root. */
export const CONFIG_SCHEMA_FILE = 'config/pipeline.schema.json';

/** Every section as a configuration file holds it, each optional. */
const fileSchema = z.strictObject({
  $schema: z.optional(z.string()),
  stack: z.optional(stackSchema),
  vendor: z.optional(vendorSchema),
  poll: z.optional(pollSchema),
  scan: z.optional(scanSchema),
  intake: z.optional(intakeSchema),
  breach: z.optional(breachSchema),
  rotation: z.optional(rotationSchema),
  notifications: z.optional(notificationsSchema),
  alarms: z.optional(alarmsSchema),
  domainLists: z.optional(z.record(z.string(), domainListSchema)),
  schedules: z.optional(z.array(scheduleSchema)),
  logRetentionDays: z.optional(logRetentionDaysSchema),
  removalPolicy: z.optional(removalPolicySchema),
  lambdaRuntime: z.optional(lambdaRuntimeSchema),
  lambdaSourceMaps: z.optional(lambdaSourceMapsSchema),
});

/** The configuration file's JSON Schema (draft 2020-12), as written to {@link CONFIG_SCHEMA_FILE}. */
export function pipelineConfigJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(fileSchema, {
    // What a user writes: defaults are optional, and a field's input shape is what is checked.
    io: 'input',
    // A refinement or transform written as code has no JSON Schema form; the shape around it still does.
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return {
    ...generated,
    title: 'Security pipeline configuration',
    description:
      'The file given to `cdk synth -c pipelineConfigFile=...`, `npm start -- --config ...` and `npm run check-config`. Every setting: docs/configuration.md.',
  };
}
