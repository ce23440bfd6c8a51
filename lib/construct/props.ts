/**
 * `SecurityPipeline`'s props as a CDK user types them: plain interfaces, every setting documented
 * with its default, CDK's own types for times, sizes, schedules, log retention and removal.
 *
 * The rules stay in the configuration's zod schemas (lib/config/): the construct turns these props
 * into the configuration's shape (props-to-config.ts) and validates them there, each problem naming
 * its prop. A `@default` here must be what the schema does when the prop is left out;
 * test/config/construct-props.test.ts sets each documented default and checks it changes nothing.
 *
 * Written so jsii can compile them: no mapped, conditional or zod-inferred types, no `readonly T[]`.
 */
import type { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import type { Schedule } from 'aws-cdk-lib/aws-events';
import type { Runtime } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { BreachProps } from './breach-props.ts';
import type { SecurityPipelineResources } from './resource-props.ts';
import type { ScanProps } from './scan-props.ts';
import type { PipelineScheduleProps } from './schedule-props.ts';

/** How the organisation's vendor API key(s) are stored in Secrets Manager. */
export enum VendorKeyStorage {
  /** One secret holds the org key for all three vendor APIs. */
  SINGLE = 'single',
  /** One secret per vendor API (`scan`, `keys`, `breach`). */
  PER_API = 'per-api',
}

/** Where the vendor's three APIs are and how their keys are kept. */
export interface VendorProps {
  /**
   * Base URL of the scanning API: https, or http to a loopback address for local runs.
   * @default 'https://vendor.example.com' (a placeholder: synth warns, nothing deployed with it reaches the vendor)
   */
  readonly scanApiUrl?: string;
  /**
   * Base URL of the key-management API.
   * @default - scanApiUrl
   */
  readonly keysApiUrl?: string;
  /**
   * Base URL of the breach-report API.
   * @default - scanApiUrl
   */
  readonly breachApiUrl?: string;
  /**
   * The organisation's UUID, used in the key-management API's paths.
   * @default - read from the key secret's `orgUuid` field
   */
  readonly orgUuid?: string;
  /**
   * One secret for all three APIs, or one secret per API.
   * @default VendorKeyStorage.SINGLE
   */
  readonly keys?: VendorKeyStorage;
}

/** How a scan's status is polled: waits that grow from `minWait` to `maxWait`, up to `deadline`. */
export interface PollProps {
  /**
   * The first wait between status polls, whole seconds from 1 second to 1 hour.
   * @default Duration.seconds(60)
   */
  readonly minWait?: Duration;
  /**
   * The longest wait between status polls, whole seconds from 1 second to 1 hour, not below `minWait`.
   * @default Duration.seconds(300)
   */
  readonly maxWait?: Duration;
  /**
   * Each wait is the previous one times this factor (1 to 4), up to `maxWait`.
   * @default 1.25
   */
  readonly growthFactor?: number;
  /**
   * A scan still running after this long fails its run, whole seconds up to 7 days. The worst-case
   * poll loop must stay within half of Step Functions' execution history limit.
   * @default Duration.days(1)
   */
  readonly deadline?: Duration;
}

/** Where uploaded domain lists start runs. */
export interface IntakeProps {
  /**
   * Key prefix in the input bucket under which an upload starts a list run; ends with `/`.
   * @default 'incoming/'
   */
  readonly prefix?: string;
  /**
   * Key suffixes that count as domain lists, matched case-insensitively; each starts with `.`.
   * @default ['.txt', '.csv']
   */
  readonly suffixes?: string[];
  /**
   * A list object larger than this is refused before it is read, with a summary saying why; 1 KiB
   * to 100 MiB.
   * @default Size.mebibytes(20)
   */
  readonly maxListSize?: Size;
}

/** A named domain list that schedules refer to: set exactly one of `objectKey` and `domains`. */
export interface DomainListProps {
  /**
   * Key of the list object in the input bucket; ends with one of `intake.suffixes`.
   * @default - none: `domains` is set
   */
  readonly objectKey?: string;
  /**
   * The domains themselves.
   * @default - none: `objectKey` is set
   */
  readonly domains?: string[];
}

/** A schedule that starts a domain-list run: set exactly one of `domainList` and `domains`. */
export interface DomainListScheduleProps extends PipelineScheduleProps {
  /**
   * Name of an entry of `domainLists`.
   * @default - none: `domains` is set
   */
  readonly domainList?: string;
  /**
   * Inline domains.
   * @default - none: `domainList` is set
   */
  readonly domains?: string[];
}

/** A secret the rotation writes the new key to after every rotation. */
export interface MirrorSecretProps {
  /** The mirror secret's ARN. */
  readonly secretArn: string;
  /**
   * The customer managed key that encrypts it, a key ARN in the secret's Region.
   * @default - the AWS managed key (no grant needed)
   */
  readonly kmsKeyArn?: string;
}

/** Native Secrets Manager rotation of the vendor org key. */
export interface RotationProps {
  /**
   * Attach native rotation to the org key's secret.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * When Secrets Manager rotates: a rate in hours or days, or a cron.
   * @default Schedule.rate(Duration.days(30))
   */
  readonly schedule?: Schedule;
  /**
   * How long the rotation window stays open after the scheduled time, whole hours from 1 to 24.
   * @default Duration.hours(4)
   */
  readonly window?: Duration;
  /**
   * Dot path of the new key in the rotate answer, e.g. `data.key`.
   * @default - common names searched
   */
  readonly newKeyFieldPath?: string;
  /**
   * Secrets integrations read, written with the new value after every rotation.
   * @default []
   */
  readonly mirrorSecrets?: MirrorSecretProps[];
  /**
   * How long after the rotate answer a new key may still be refused while it reaches every vendor
   * server; whole seconds from 0 to 480 (the rotation function's timeout less the rotate call).
   * @default Duration.seconds(180)
   */
  readonly keyPropagation?: Duration;
  /**
   * The key-age alarm fires past this age, whole days up to 1100; required with a cron schedule.
   * @default - the rate's period, in whole days, plus 3 days
   */
  readonly maxKeyAge?: Duration;
}

/** Who hears of alarms and runs. */
export interface NotificationProps {
  /**
   * Subscribed to the alarm topic; the address must confirm by email.
   * @default - no subscription
   */
  readonly email?: string;
  /**
   * Subscribed to the runs topic: one message per finished list or watchlist run.
   * @default - no subscription
   */
  readonly runsEmail?: string;
}

/** Thresholds of the alarms on the pipeline's own metrics. */
export interface AlarmProps {
  /**
   * Failed or timed-out scans per started scan, in an hour, that alarm (ScanFailureRate); 0.01 to 1.
   * @default 0.25
   */
  readonly scanFailureRate?: number;
  /**
   * Started scans in the hour below which the failure rate is not judged.
   * @default 5
   */
  readonly minScansForRate?: number;
  /**
   * The window of NoSuccessfulScan, NothingStored and NoScanStarted while schedules are enabled;
   * whole days from 1 to 7 (CloudWatch's longest period).
   * @default Duration.days(2)
   */
  readonly quietPeriod?: Duration;
  /**
   * Throttled vendor retries per 5 minutes that, for 15 minutes, alarm.
   * @default 20
   */
  readonly throttledRetriesPerFiveMinutes?: number;
}

/** Every setting of the pipeline, each optional with its default. */
export interface SecurityPipelineSettingsProps {
  /**
   * Where the vendor's three APIs are and how their keys are kept.
   * @default - the placeholder vendor URL, one key secret
   */
  readonly vendor?: VendorProps;
  /**
   * How a scan's status is polled.
   * @default - waits from 60 s to 300 s, growing by 1.25, for up to a day
   */
  readonly poll?: PollProps;
  /**
   * How domain scans run and are reconciled.
   * @default - 10 domains at once, scan reconciliation daily
   */
  readonly scan?: ScanProps;
  /**
   * Where uploaded domain lists start runs.
   * @default - `.txt` and `.csv` uploads under `incoming/`
   */
  readonly intake?: IntakeProps;
  /**
   * How breach reports and watchlist runs go.
   * @default - watchlists under `watchlists/`, 50 addresses per report, reconciliation daily
   */
  readonly breach?: BreachProps;
  /**
   * Native Secrets Manager rotation of the vendor org key.
   * @default - the org key rotated every 30 days
   */
  readonly rotation?: RotationProps;
  /**
   * Who hears of alarms and runs.
   * @default - no email subscriptions
   */
  readonly notifications?: NotificationProps;
  /**
   * Thresholds of the alarms on the pipeline's own metrics.
   * @default - the documented thresholds of each alarm prop
   */
  readonly alarms?: AlarmProps;
  /**
   * Named domain lists that schedules refer to, by name (`[A-Za-z0-9_-]{1,64}`).
   * @default - none
   */
  readonly domainLists?: { [name: string]: DomainListProps };
  /**
   * EventBridge Scheduler schedules that start domain-list runs.
   * @default []
   */
  readonly schedules?: DomainListScheduleProps[];
  /**
   * Retention of every log group of the pipeline.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
  /**
   * What happens to the data buckets and log groups when they leave the stack: `RETAIN` (or
   * `RETAIN_ON_UPDATE_OR_DELETE`) keeps them, `DESTROY` (test stacks only) deletes them. `SNAPSHOT` is
   * refused: S3 buckets and log groups have no snapshots.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * The Lambda runtime of every function: `Runtime.NODEJS_24_X` or `Runtime.NODEJS_22_X` (Lambda
   * deprecates Node.js 22 on 2027-04-30). Functions bundled at synth target its Node.js version.
   * @default Runtime.NODEJS_24_X
   */
  readonly lambdaRuntime?: Runtime;
  /**
   * Ship each function's source maps and run it with `--enable-source-maps`, so stack traces name
   * the TypeScript file and line; each asset is then several times larger.
   * @default false
   */
  readonly lambdaSourceMaps?: boolean;
}

/** `SecurityPipeline`'s props: its settings and the resources a team may bring. */
export interface SecurityPipelineProps extends SecurityPipelineSettingsProps, SecurityPipelineResources {}
