/**
 * A configuration file's settings as `SecurityPipeline`'s props: what the deployable app does with
 * the file it reads, so the construct has one shape (its props) and the file maps onto it. Seconds
 * become `Duration`s, bytes `Size`s, expressions `Schedule`s; the construct turns them back and
 * validates them again, which gives the same configuration (test/config/construct-props.test.ts).
 */
import { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { PipelineConfig, ScheduleConfig } from '../config/schema.ts';
import { LAMBDA_RUNTIME_SETTINGS } from '../platform/function-settings.ts';
import type { BreachProps } from './breach-props.ts';
import type { DomainListProps, SecurityPipelineSettingsProps, VendorKeyStorage } from './props.ts';
import type { ScanProps } from './scan-props.ts';
import type { PipelineScheduleProps } from './schedule-props.ts';

type ScheduleTiming = Omit<ScheduleConfig, 'domainList' | 'domains'>;

/** The validated configuration (its `stack` section is the app's, not the construct's) as props. */
export function pipelinePropsFromConfig(config: PipelineConfig): SecurityPipelineSettingsProps {
  const { vendor, poll, intake, rotation, alarms } = config;
  return {
    vendor: { ...vendor, keys: vendor.keys as VendorKeyStorage },
    poll: {
      minWait: Duration.seconds(poll.minWaitSeconds),
      maxWait: Duration.seconds(poll.maxWaitSeconds),
      growthFactor: poll.growthFactor,
      deadline: Duration.seconds(poll.deadlineSeconds),
    },
    scan: scanProps(config.scan),
    intake: {
      prefix: intake.prefix,
      suffixes: [...intake.suffixes],
      maxListSize: Size.bytes(intake.maxListBytes),
    },
    breach: breachProps(config.breach),
    rotation: {
      enabled: rotation.enabled,
      schedule: Schedule.expression(rotation.schedule),
      window: Duration.hours(rotation.windowHours),
      ...(rotation.newKeyFieldPath === undefined ? {} : { newKeyFieldPath: rotation.newKeyFieldPath }),
      mirrorSecrets: rotation.mirrorSecrets.map((mirror) => ({ ...mirror })),
      keyPropagation: Duration.seconds(rotation.keyPropagationSeconds),
      ...(rotation.maxKeyAgeDays === undefined ? {} : { maxKeyAge: Duration.days(rotation.maxKeyAgeDays) }),
    },
    notifications: { ...config.notifications },
    alarms: {
      scanFailureRate: alarms.scanFailureRate,
      minScansForRate: alarms.minScansForRate,
      quietPeriod: Duration.days(alarms.quietDays),
      throttledRetriesPerFiveMinutes: alarms.throttledRetriesPerFiveMinutes,
    },
    domainLists: Object.fromEntries(
      Object.entries(config.domainLists).map(([name, list]): [string, DomainListProps] => [
        name,
        'domains' in list ? { domains: [...list.domains] } : { objectKey: list.objectKey },
      ]),
    ),
    schedules: config.schedules.map((schedule) => ({
      ...scheduleProps(schedule),
      ...(schedule.domainList === undefined ? {} : { domainList: schedule.domainList }),
      ...(schedule.domains === undefined ? {} : { domains: [...schedule.domains] }),
    })),
    // CloudWatch's retention values are the RetentionDays enum's values (checked by the schema).
    logRetention: config.logRetentionDays as RetentionDays,
    removalPolicy: config.removalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    lambdaRuntime: LAMBDA_RUNTIME_SETTINGS[config.lambdaRuntime].runtime,
    lambdaSourceMaps: config.lambdaSourceMaps,
  };
}

function scanProps(scan: PipelineConfig['scan']): ScanProps {
  const { reconciliation } = scan;
  return {
    deleteAtVendorAfterManifest: scan.deleteAtVendorAfterManifest,
    ...(scan.statusVocabulary === undefined
      ? {}
      : {
          statusVocabulary: {
            pending: [...scan.statusVocabulary.pending],
            running: [...scan.statusVocabulary.running],
            succeeded: [...scan.statusVocabulary.succeeded],
            failed: [...scan.statusVocabulary.failed],
          },
        }),
    allowSpecialUseDomains: [...scan.allowSpecialUseDomains],
    maxConcurrency: scan.maxConcurrency,
    maxOutputSize: Size.bytes(scan.maxOutputBytes),
    maxDecodingRatio: scan.maxDecodingRatio,
    reconciliation: {
      enabled: reconciliation.enabled,
      schedule: Schedule.expression(reconciliation.schedule),
      ...(reconciliation.horizonDays === undefined
        ? {}
        : { horizon: Duration.days(reconciliation.horizonDays) }),
      ...(reconciliation.minAgeMinutes === undefined
        ? {}
        : { minAge: Duration.minutes(reconciliation.minAgeMinutes) }),
      matchWindow: Duration.minutes(reconciliation.matchWindowMinutes),
      maxArchivesPerRun: reconciliation.maxArchivesPerRun,
      listFields: { ...reconciliation.listFields },
      statsFields: { ...reconciliation.statsFields },
    },
  };
}

function breachProps(breach: PipelineConfig['breach']): BreachProps {
  return {
    maxEmails: breach.maxEmails,
    watchlistPrefix: breach.watchlistPrefix,
    maxWatchlistSize: Size.bytes(breach.maxWatchlistBytes),
    maxWatchlistRows: breach.maxWatchlistRows,
    maxArchiveSize: Size.bytes(breach.maxArchiveBytes),
    maxUncompressedSize: Size.bytes(breach.maxUncompressedBytes),
    maxCompressionRatio: breach.maxCompressionRatio,
    maxInlineValueSize: Size.bytes(breach.maxInlineValueBytes),
    maxConcurrency: breach.maxConcurrency,
    reconcileSchedule: Schedule.expression(breach.reconcileSchedule),
    reconcileMaxArchivesPerRun: breach.reconcileMaxArchivesPerRun,
    schedules: breach.schedules.map((schedule) => ({
      ...scheduleProps(schedule),
      watchlistKey: schedule.watchlistKey,
    })),
  };
}

function scheduleProps(schedule: ScheduleTiming): PipelineScheduleProps {
  return {
    name: schedule.name,
    schedule: Schedule.expression(schedule.expression),
    timeZone: schedule.timeZone,
    flexibleWindow: Duration.minutes(schedule.flexibleWindowMinutes),
    maxRetryAttempts: schedule.maxRetryAttempts,
    maxEventAge: Duration.seconds(schedule.maxEventAgeSeconds),
    enabled: schedule.enabled,
  };
}
