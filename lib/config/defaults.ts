/**
 * The configuration used when nothing is set: what the schemas produce for an empty input, so a
 * default is written once, in the schema, and read here.
 */

import { alarmsSchema } from './alarms-schema.ts';
import { breachSchema } from './breach-schema.ts';
import { notificationsSchema } from './notifications-schema.ts';
import { rotationSchema } from './rotation-schema.ts';
import { intakeSchema, type PipelineConfig, pollSchema, scanSchema, vendorSchema } from './schema.ts';
import { stackSchema } from './stack-schema.ts';

export const DEFAULT_PIPELINE_CONFIG: PipelineConfig = Object.freeze({
  vendor: vendorSchema.parse({}),
  poll: pollSchema.parse({}),
  scan: scanSchema.parse({}),
  intake: intakeSchema.parse({}),
  breach: breachSchema.parse({}),
  rotation: rotationSchema.parse({}),
  notifications: notificationsSchema.parse({}),
  alarms: alarmsSchema.parse({}),
  domainLists: {},
  schedules: [],
  logRetentionDays: 90,
  removalPolicy: 'retain',
  lambdaRuntime: 'nodejs24.x',
  lambdaSourceMaps: false,
  stack: stackSchema.parse({}),
});
