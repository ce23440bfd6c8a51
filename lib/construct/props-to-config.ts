/**
 * `SecurityPipeline`'s props in the configuration's shape, so the configuration's one parser
 * validates them: a `Duration` becomes the setting's seconds, minutes, hours or days, a `Size` its
 * bytes, a `Schedule` its expression, `RetentionDays` and `RemovalPolicy` the values the schema
 * takes. Every problem names the prop a user typed (`props.poll.maxWait (in seconds) …`), never
 * the configuration file's name for it.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { type ConfigIssue, PipelineConfigError } from '../config/errors.ts';
import { parsePipelineConfig } from '../config/parse.ts';
import type { PipelineConfig, PipelineConfigInput } from '../config/schema.ts';
import type { BreachProps, WatchlistScheduleProps } from './breach-props.ts';
import type { SecurityPipelineSettingsProps } from './props.ts';
import type { PipelineScheduleProps } from './schedule-props.ts';

type TimeUnit = 'seconds' | 'minutes' | 'hours' | 'days';

/** The configuration's settings whose prop has another name, or a CDK type with a unit. */
export const PROP_NAMES: Readonly<Record<string, { readonly prop: string; readonly unit?: string }>> = {
  minWaitSeconds: { prop: 'minWait', unit: 'seconds' },
  maxWaitSeconds: { prop: 'maxWait', unit: 'seconds' },
  deadlineSeconds: { prop: 'deadline', unit: 'seconds' },
  maxOutputBytes: { prop: 'maxOutputSize', unit: 'bytes' },
  maxListBytes: { prop: 'maxListSize', unit: 'bytes' },
  horizonDays: { prop: 'horizon', unit: 'days' },
  minAgeMinutes: { prop: 'minAge', unit: 'minutes' },
  matchWindowMinutes: { prop: 'matchWindow', unit: 'minutes' },
  maxWatchlistBytes: { prop: 'maxWatchlistSize', unit: 'bytes' },
  maxArchiveBytes: { prop: 'maxArchiveSize', unit: 'bytes' },
  maxUncompressedBytes: { prop: 'maxUncompressedSize', unit: 'bytes' },
  maxInlineValueBytes: { prop: 'maxInlineValueSize', unit: 'bytes' },
  windowHours: { prop: 'window', unit: 'hours' },
  keyPropagationSeconds: { prop: 'keyPropagation', unit: 'seconds' },
  maxKeyAgeDays: { prop: 'maxKeyAge', unit: 'days' },
  quietDays: { prop: 'quietPeriod', unit: 'days' },
  flexibleWindowMinutes: { prop: 'flexibleWindow', unit: 'minutes' },
  maxEventAgeSeconds: { prop: 'maxEventAge', unit: 'seconds' },
  expression: { prop: 'schedule' },
  logRetentionDays: { prop: 'logRetention' },
};

/** `pipeline.poll.maxWaitSeconds` said as the prop: `props.poll.maxWait (in seconds)`. */
export function propSettingName(setting: string): string {
  let unit: string | undefined;
  const renamed = setting.replace(/^pipeline\b/, 'props').replace(/[A-Za-z]+/g, (key) => {
    const name = PROP_NAMES[key];
    if (name === undefined) return key;
    unit = name.unit;
    return name.prop;
  });
  return unit === undefined ? renamed : `${renamed} (in ${unit})`;
}

/**
 * The props validated through the configuration's parser.
 * @throws PipelineConfigError listing every problem, each naming its prop
 */
export function pipelineConfigFromProps(
  props: SecurityPipelineSettingsProps,
  source: string,
): PipelineConfig {
  const converted = new PropConverter();
  const input = converted.settings(props);
  let config: PipelineConfig | undefined;
  let issues: readonly ConfigIssue[] = [];
  try {
    config = parsePipelineConfig(input, source);
  } catch (error) {
    if (!(error instanceof PipelineConfigError)) throw error;
    issues = error.issues.map((issue) => ({
      setting: propSettingName(issue.setting),
      problem: issue.problem.replace(/\bpipeline(\.[\w.[\]]+)/g, (path) => propSettingName(path)),
    }));
  }
  // A prop that could not be converted was left out, so its own problem is the one to report first.
  if (config === undefined || converted.issues.length > 0)
    throw new PipelineConfigError(source, [...converted.issues, ...issues]);
  return config;
}

/** Converts the CDK-typed props, collecting a problem (by prop) for each value of the wrong kind. */
class PropConverter {
  readonly issues: ConfigIssue[] = [];

  settings(props: SecurityPipelineSettingsProps): PipelineConfigInput {
    const { vendor, poll, scan, intake, breach, rotation, notifications, alarms } = props;
    return this.known(props, 'props', {
      vendor,
      poll:
        poll &&
        this.known(poll, 'props.poll', {
          minWaitSeconds: this.time(poll.minWait, 'seconds', 'props.poll.minWait'),
          maxWaitSeconds: this.time(poll.maxWait, 'seconds', 'props.poll.maxWait'),
          growthFactor: poll.growthFactor,
          deadlineSeconds: this.time(poll.deadline, 'seconds', 'props.poll.deadline'),
        }),
      scan: scan && this.scan(scan),
      intake:
        intake &&
        this.known(intake, 'props.intake', {
          prefix: intake.prefix,
          suffixes: intake.suffixes,
          maxListBytes: this.bytes(intake.maxListSize, 'props.intake.maxListSize'),
        }),
      breach: breach && this.breach(breach),
      rotation:
        rotation &&
        this.known(rotation, 'props.rotation', {
          enabled: rotation.enabled,
          schedule: this.expression(rotation.schedule, 'props.rotation.schedule'),
          windowHours: this.time(rotation.window, 'hours', 'props.rotation.window'),
          newKeyFieldPath: rotation.newKeyFieldPath,
          mirrorSecrets: rotation.mirrorSecrets?.map((mirror) => compact({ ...mirror })),
          keyPropagationSeconds: this.time(
            rotation.keyPropagation,
            'seconds',
            'props.rotation.keyPropagation',
          ),
          maxKeyAgeDays: this.time(rotation.maxKeyAge, 'days', 'props.rotation.maxKeyAge'),
        }),
      notifications,
      alarms:
        alarms &&
        this.known(alarms, 'props.alarms', {
          scanFailureRate: alarms.scanFailureRate,
          minScansForRate: alarms.minScansForRate,
          quietDays: this.time(alarms.quietPeriod, 'days', 'props.alarms.quietPeriod'),
          throttledRetriesPerFiveMinutes: alarms.throttledRetriesPerFiveMinutes,
        }),
      domainLists: props.domainLists,
      schedules: props.schedules?.map((schedule, index) => {
        const { domainList, domains } = schedule;
        const at = `props.schedules[${index}]`;
        return this.known(schedule, at, { ...this.schedule(schedule, at), domainList, domains });
      }),
      logRetentionDays: props.logRetention,
      removalPolicy: this.removalPolicy(props.removalPolicy),
      // The runtime's name ('nodejs24.x'); the schema says which it offers.
      lambdaRuntime: props.lambdaRuntime?.name,
      lambdaSourceMaps: props.lambdaSourceMaps,
    }) as PipelineConfigInput;
  }

  private scan(scan: NonNullable<SecurityPipelineSettingsProps['scan']>) {
    const reconciliation = scan.reconciliation;
    const at = 'props.scan.reconciliation';
    return this.known(scan, 'props.scan', {
      deleteAtVendorAfterManifest: scan.deleteAtVendorAfterManifest,
      statusVocabulary: scan.statusVocabulary,
      allowSpecialUseDomains: scan.allowSpecialUseDomains,
      maxConcurrency: scan.maxConcurrency,
      maxOutputBytes: this.bytes(scan.maxOutputSize, 'props.scan.maxOutputSize'),
      maxDecodingRatio: scan.maxDecodingRatio,
      reconciliation:
        reconciliation &&
        this.known(reconciliation, at, {
          enabled: reconciliation.enabled,
          schedule: this.expression(reconciliation.schedule, `${at}.schedule`),
          horizonDays: this.time(reconciliation.horizon, 'days', `${at}.horizon`),
          minAgeMinutes: this.time(reconciliation.minAge, 'minutes', `${at}.minAge`),
          matchWindowMinutes: this.time(reconciliation.matchWindow, 'minutes', `${at}.matchWindow`),
          maxArchivesPerRun: reconciliation.maxArchivesPerRun,
          listFields: reconciliation.listFields && compact({ ...reconciliation.listFields }),
          statsFields: reconciliation.statsFields && compact({ ...reconciliation.statsFields }),
        }),
    });
  }

  private breach(breach: BreachProps) {
    const at = 'props.breach';
    return this.known(breach, at, {
      maxEmails: breach.maxEmails,
      watchlistPrefix: breach.watchlistPrefix,
      maxWatchlistBytes: this.bytes(breach.maxWatchlistSize, `${at}.maxWatchlistSize`),
      maxWatchlistRows: breach.maxWatchlistRows,
      maxArchiveBytes: this.bytes(breach.maxArchiveSize, `${at}.maxArchiveSize`),
      maxUncompressedBytes: this.bytes(breach.maxUncompressedSize, `${at}.maxUncompressedSize`),
      maxCompressionRatio: breach.maxCompressionRatio,
      maxInlineValueBytes: this.bytes(breach.maxInlineValueSize, `${at}.maxInlineValueSize`),
      maxConcurrency: breach.maxConcurrency,
      reconcileSchedule: this.expression(breach.reconcileSchedule, `${at}.reconcileSchedule`),
      reconcileMaxArchivesPerRun: breach.reconcileMaxArchivesPerRun,
      schedules: breach.schedules?.map((schedule: WatchlistScheduleProps, index) =>
        this.known(schedule, `${at}.schedules[${index}]`, {
          ...this.schedule(schedule, `${at}.schedules[${index}]`),
          watchlistKey: schedule.watchlistKey,
        }),
      ),
    });
  }

  private schedule(schedule: PipelineScheduleProps, at: string) {
    return {
      name: schedule.name,
      expression: this.expression(schedule.schedule, `${at}.schedule`),
      timeZone: schedule.timeZone,
      flexibleWindowMinutes: this.time(schedule.flexibleWindow, 'minutes', `${at}.flexibleWindow`),
      maxRetryAttempts: schedule.maxRetryAttempts,
      maxEventAgeSeconds: this.time(schedule.maxEventAge, 'seconds', `${at}.maxEventAge`),
      enabled: schedule.enabled,
    };
  }

  /**
   * `mapping` (the configuration's names) without its undefined members, after a problem for each
   * key of `input` that is no prop here: a JavaScript caller's typo, or a configuration file's name
   * for a prop (`minWaitSeconds` for `minWait`), would otherwise be dropped unseen.
   */
  private known<T extends object>(input: object, at: string, mapping: T): Partial<T> {
    const props = Object.keys(mapping).map((key) => PROP_NAMES[key]?.prop ?? key);
    for (const key of Object.keys(input)) {
      if (props.includes(key) || (input as Record<string, unknown>)[key] === undefined) continue;
      this.issues.push({
        setting: `${at}.${key}`,
        problem: `is not a prop here (the props are ${props.join(', ')})`,
      });
    }
    return compact(mapping);
  }

  /** A Duration in whole `unit`s; a fraction or another kind of value is a problem of `prop`. */
  private time(value: unknown, unit: TimeUnit, prop: string): number | undefined {
    if (value === undefined) return undefined;
    const duration = value as Partial<Record<`to${Capitalize<TimeUnit>}`, () => number>>;
    const method = `to${unit[0]?.toUpperCase()}${unit.slice(1)}` as `to${Capitalize<TimeUnit>}`;
    return this.converted(prop, 'a Duration', value, () => duration[method]?.call(value), unit);
  }

  private bytes(value: unknown, prop: string): number | undefined {
    if (value === undefined) return undefined;
    const size = value as { toBytes?: () => number };
    return this.converted(prop, 'a Size', value, () => size.toBytes?.call(value), 'bytes');
  }

  private expression(value: unknown, prop: string): string | undefined {
    if (value === undefined) return undefined;
    const text = (value as { expressionString?: unknown }).expressionString;
    if (typeof text === 'string') return text;
    this.issues.push({ setting: prop, problem: `must be a Schedule (got ${describe(value)})` });
    return undefined;
  }

  private converted(
    prop: string,
    kind: string,
    value: unknown,
    convert: () => number | undefined,
    unit: string,
  ): number | undefined {
    try {
      const converted = convert();
      if (typeof converted === 'number') return converted;
      this.issues.push({ setting: prop, problem: `must be ${kind} (got ${describe(value)})` });
    } catch {
      // CDK refuses to round (`'1.5 minutes' cannot be converted into a whole number of seconds`).
      this.issues.push({
        setting: prop,
        problem: `must be a whole number of ${unit} (got ${describe(value)})`,
      });
    }
    return undefined;
  }

  private removalPolicy(policy: RemovalPolicy | undefined): string | undefined {
    if (policy === undefined) return undefined;
    if (policy === RemovalPolicy.DESTROY) return 'destroy';
    if (policy === RemovalPolicy.RETAIN || policy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE)
      return 'retain';
    this.issues.push({
      setting: 'props.removalPolicy',
      problem: `must be RemovalPolicy.RETAIN, RETAIN_ON_UPDATE_OR_DELETE or DESTROY: S3 buckets and log groups have no snapshots (got ${describe(policy)})`,
    });
    return undefined;
  }
}

function describe(value: unknown): string {
  const human = (value as { toHumanString?: () => string } | null)?.toHumanString;
  if (typeof human === 'function') return human.call(value);
  if (typeof value === 'object' && value !== null && 'toBytes' in value) return 'a Size';
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** The object without its undefined members, so a prop left out is a setting left out. */
function compact<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as Partial<T>;
}
