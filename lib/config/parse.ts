/**
 * Validates a whole configuration: each section through its schema (schema.ts), then the rules
 * that span sections. Every problem is collected, so one run reports them all, each naming its
 * setting: `pipeline.poll.maxWaitSeconds …`, or `schedule 'nightly' expression …` for a schedule,
 * because the schedule's name is what an operator searches their configuration for.
 */
import type * as z from 'zod/mini';
import {
  describeValue,
  type IssuePath,
  knownKeysOf,
  problemsOf,
  type SettingProblem,
} from '#lambdas/platform/input/schema';
import { alarmsSchema } from './alarms-schema.ts';
import { breachSchema } from './breach-schema.ts';
import { DEFAULT_PIPELINE_CONFIG } from './defaults.ts';
import { type ConfigIssue, PipelineConfigError } from './errors.ts';
import { notificationsSchema } from './notifications-schema.ts';
import { reconcileFunctionSettings, reconciliationWindowProblem } from './reconciliation-schema.ts';
import { rotationSchema } from './rotation-schema.ts';
import {
  type DomainListDefinition,
  domainListSchemaFor,
  intakeSchema,
  lambdaRuntimeSchema,
  lambdaSourceMapsSchema,
  logRetentionDaysSchema,
  MAX_SCHEDULE_INPUT_CHARS,
  NAME_PATTERN,
  type PipelineConfig,
  pollSchema,
  ROOT,
  removalPolicySchema,
  rootSchema,
  type ScheduleConfig,
  scanSchema,
  scheduleSchemaFor,
  vendorSchema,
} from './schema.ts';
import { stackSchema } from './stack-schema.ts';

/**
 * Merges `raw` onto the defaults and validates the result.
 * @param raw the user's settings (an object, or undefined for all defaults)
 * @param source where they came from, for the error message (a file name, "context 'pipeline'")
 * @throws PipelineConfigError listing every problem, each naming its setting
 */
export function parsePipelineConfig(raw: unknown, source: string): PipelineConfig {
  const issues: ConfigIssue[] = [];
  const input = raw ?? {};
  const root = rootSchema.safeParse(input);
  if (!root.success) {
    issues.push(...problemsOf(root.error, dotted(ROOT), (path) => knownKeysOf(rootSchema, path)));
    if (typeof input !== 'object' || Array.isArray(input)) throw new PipelineConfigError(source, issues);
  }
  const sections = input as Record<string, unknown>;
  const check = <S extends z.ZodMiniType>(schema: S, value: unknown, at: string, fallback: z.output<S>) =>
    parseSection(schema, value, at, fallback, issues);

  const vendor = check(vendorSchema, sections.vendor ?? {}, `${ROOT}.vendor`, DEFAULT_PIPELINE_CONFIG.vendor);
  const poll = check(pollSchema, sections.poll ?? {}, `${ROOT}.poll`, DEFAULT_PIPELINE_CONFIG.poll);
  const scan = check(scanSchema, sections.scan ?? {}, `${ROOT}.scan`, DEFAULT_PIPELINE_CONFIG.scan);
  const intake = check(intakeSchema, sections.intake ?? {}, `${ROOT}.intake`, DEFAULT_PIPELINE_CONFIG.intake);
  const breach = check(breachSchema, sections.breach ?? {}, `${ROOT}.breach`, DEFAULT_PIPELINE_CONFIG.breach);
  const [lists, watchlists] = [intake.prefix, breach.watchlistPrefix];
  if (lists.startsWith(watchlists) || watchlists.startsWith(lists)) {
    // One upload must start one kind of run: overlapping prefixes would start both.
    issues.push({
      setting: `${ROOT}.breach.watchlistPrefix`,
      problem: `must not overlap pipeline.intake.prefix (${JSON.stringify(lists)}) (got ${JSON.stringify(watchlists)})`,
    });
  }
  const windowProblem = reconciliationWindowProblem(
    reconcileFunctionSettings(scan.reconciliation, {
      deadlineSeconds: poll.deadlineSeconds,
      deleteAtVendorAfterManifest: scan.deleteAtVendorAfterManifest,
    }),
  );
  if (windowProblem && scan.reconciliation.enabled) {
    issues.push({ setting: `${ROOT}.scan.reconciliation.horizonDays`, problem: windowProblem });
  }
  const allow = scan.allowSpecialUseDomains;
  const domainLists = parseDomainLists(sections.domainLists, intake.suffixes, allow, issues);
  const schedules = parseSchedules(sections.schedules, domainLists, allow, issues);
  const logRetentionDays =
    sections.logRetentionDays === undefined
      ? DEFAULT_PIPELINE_CONFIG.logRetentionDays
      : check(logRetentionDaysSchema, sections.logRetentionDays, `${ROOT}.logRetentionDays`, 0);
  const removalPolicy =
    sections.removalPolicy === undefined
      ? DEFAULT_PIPELINE_CONFIG.removalPolicy
      : check(removalPolicySchema, sections.removalPolicy, `${ROOT}.removalPolicy`, 'retain');
  const lambdaRuntime =
    sections.lambdaRuntime === undefined
      ? DEFAULT_PIPELINE_CONFIG.lambdaRuntime
      : check(lambdaRuntimeSchema, sections.lambdaRuntime, `${ROOT}.lambdaRuntime`, 'nodejs24.x');
  const lambdaSourceMaps =
    sections.lambdaSourceMaps === undefined
      ? DEFAULT_PIPELINE_CONFIG.lambdaSourceMaps
      : check(lambdaSourceMapsSchema, sections.lambdaSourceMaps, `${ROOT}.lambdaSourceMaps`, false);

  const rotation = check(
    rotationSchema,
    sections.rotation ?? {},
    `${ROOT}.rotation`,
    DEFAULT_PIPELINE_CONFIG.rotation,
  );
  const notifications = check(
    notificationsSchema,
    sections.notifications ?? {},
    `${ROOT}.notifications`,
    DEFAULT_PIPELINE_CONFIG.notifications,
  );
  const alarms = check(alarmsSchema, sections.alarms ?? {}, `${ROOT}.alarms`, DEFAULT_PIPELINE_CONFIG.alarms);
  const stack = check(stackSchema, sections.stack ?? {}, `${ROOT}.stack`, DEFAULT_PIPELINE_CONFIG.stack);

  if (issues.length > 0) throw new PipelineConfigError(source, issues);
  return {
    vendor,
    poll,
    scan,
    intake,
    breach,
    rotation,
    notifications,
    alarms,
    domainLists,
    schedules,
    logRetentionDays,
    removalPolicy,
    lambdaRuntime,
    lambdaSourceMaps,
    stack,
  };
}

/** Parses one section; its problems are named `<at>.<path>`. */
function parseSection<S extends z.ZodMiniType>(
  schema: S,
  value: unknown,
  at: string,
  fallback: z.output<S>,
  issues: ConfigIssue[],
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  issues.push(...problemsOf(result.error, dotted(at), (path) => knownKeysOf(schema, path)));
  return fallback;
}

/** `pipeline.vendor.keys`, `pipeline.intake.suffixes[0]`. */
function dotted(at: string): (path: IssuePath) => string {
  return (path) =>
    path.reduce<string>(
      (name, segment) => (typeof segment === 'number' ? `${name}[${segment}]` : `${name}.${String(segment)}`),
      at,
    );
}

function parseDomainLists(
  value: unknown,
  suffixes: readonly string[],
  allowSpecialUse: readonly string[],
  issues: ConfigIssue[],
): Record<string, DomainListDefinition> {
  const at = `${ROOT}.domainLists`;
  const lists: Record<string, DomainListDefinition> = {};
  if (value === undefined) return lists;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    issues.push({ setting: at, problem: `must be an object (got ${describeValue(value)})` });
    return lists;
  }
  for (const [name, entry] of Object.entries(value)) {
    const setting = `${at}.${name}`;
    if (!NAME_PATTERN.test(name)) {
      issues.push({ setting, problem: `has an invalid name: use 1-64 of A-Z, a-z, 0-9, '_' and '-'` });
      continue;
    }
    const before = issues.length;
    const parsed = parseSection(domainListSchemaFor(allowSpecialUse), entry, setting, {}, issues);
    if (issues.length > before) continue;
    if (parsed.objectKey !== undefined) {
      const objectKey = parsed.objectKey;
      // The list handler refuses other keys, so fail here rather than at 3 a.m. on the first fire.
      if (!suffixes.some((suffix) => objectKey.toLowerCase().endsWith(suffix))) {
        issues.push({
          setting: `${setting}.objectKey`,
          problem: `must end with one of ${suffixes.join(', ')} (pipeline.intake.suffixes) (got ${describeValue(objectKey)})`,
        });
        continue;
      }
      lists[name] = { objectKey };
    } else if (parsed.domains !== undefined) {
      lists[name] = { domains: parsed.domains };
    }
  }
  return lists;
}

function parseSchedules(
  value: unknown,
  domainLists: Record<string, DomainListDefinition>,
  allowSpecialUse: readonly string[],
  issues: ConfigIssue[],
): ScheduleConfig[] {
  const at = `${ROOT}.schedules`;
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    issues.push({ setting: at, problem: `must be an array (got ${describeValue(value)})` });
    return [];
  }
  const schedules: ScheduleConfig[] = [];
  const names = new Set<string>();
  value.forEach((entry: unknown, index) => {
    const name = (entry as { name?: unknown } | null)?.name;
    if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
      issues.push({
        setting: `${at}[${index}].name`,
        problem: `must be 1-64 of A-Z, a-z, 0-9, '_' and '-' (got ${describeValue(name)})`,
      });
      return;
    }
    const setting = `schedule '${name}'`;
    if (names.has(name)) {
      issues.push({
        setting,
        problem: `is defined more than once (${at}[${index}]): schedule names must be unique`,
      });
      return;
    }
    names.add(name);
    const before = issues.length;
    const schema = scheduleSchemaFor(allowSpecialUse);
    const result = schema.safeParse(entry);
    if (!result.success) {
      issues.push(...problemsOf(result.error, scheduleNamer(setting), (path) => knownKeysOf(schema, path)));
    }
    // A reference to an unknown list is reported even when other settings of the schedule are bad.
    const domainList = (entry as { domainList?: unknown }).domainList;
    if (typeof domainList === 'string' && domainLists[domainList] === undefined && !hasBothSources(entry)) {
      issues.push({
        setting,
        problem: `refers to unknown domain list '${domainList}' (define it under pipeline.domainLists)`,
      });
    }
    if (!result.success || issues.length > before) return;
    const schedule = result.data;
    const problem = schedule.domains === undefined ? undefined : inlineInputProblem(name, schedule.domains);
    if (problem) {
      issues.push({ setting: `${setting} domains`, problem });
      return;
    }
    schedules.push(schedule);
  });
  return schedules;
}

function hasBothSources(entry: unknown): boolean {
  return (entry as { domains?: unknown }).domains !== undefined;
}

/** `schedule 'nightly' expression`, `schedule 'nightly' domains[3]`. */
function scheduleNamer(setting: string): (path: IssuePath) => string {
  return (path) => {
    const [field, ...rest] = path;
    if (field === undefined) return setting;
    return rest.reduce<string>(
      (name, segment) => (typeof segment === 'number' ? `${name}[${segment}]` : `${name}.${String(segment)}`),
      `${setting} ${String(field)}`,
    );
  };
}

/** The inline list travels in the schedule's target Input, which Scheduler caps. */
function inlineInputProblem(name: string, domains: readonly string[]): string | undefined {
  const size = JSON.stringify({
    source: { type: 'schedule', scheduleName: name, scheduledTime: '', domains },
  }).length;
  if (size <= MAX_SCHEDULE_INPUT_CHARS - 200) return undefined;
  return (
    `make a ${size}-character input; EventBridge Scheduler allows ${MAX_SCHEDULE_INPUT_CHARS}: ` +
    'put the list in the input bucket and use domainList with objectKey'
  );
}

export type { SettingProblem };
