/**
 * The rules a resource a team brings to `SecurityPipeline` must meet, checked at synth. A resource
 * defined in the same CDK app (a `Bucket`, `Topic` or `Secret`) is read through its L1 resource; an
 * imported one (`Bucket.fromBucketName`, `Topic.fromTopicArn`, `Secret.fromSecretNameV2`) has no
 * properties to read, so its rules are stated in a warning instead of checked.
 */
import { Annotations, Stack, Token } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { CfnBucket, type IBucket } from 'aws-cdk-lib/aws-s3';
import { CfnSecret, type ISecret, RotationSchedule } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnTopic, type ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { API_KEY_FIELDS } from '#lambdas/platform/secret-placeholder';
import type { VendorApi } from '#lambdas/registry';
import { ORG_KEY_API, VENDOR_APIS } from '#lambdas/registry';
import type { ConfigIssue } from './config/errors.ts';
import type { SecurityPipelineResources } from './construct/resource-props.ts';
import { acknowledge } from './platform/nag.ts';

export type { SecurityPipelineResources, VendorKeySecrets } from './construct/resource-props.ts';

/** What a check found: problems fail the synth; warnings are rules that could not be checked. */
interface Findings {
  readonly issues: ConfigIssue[];
  readonly warnings: string[];
}

type BucketProp = 'inputBucket' | 'resultsBucket';

/**
 * Checks every brought resource, adds the statements the pipeline needs to those defined in this
 * app, and warns (naming the prop) about the rules of imported ones.
 * @returns the problems, each naming its prop; none when every brought resource fits
 */
export function checkBroughtResources(
  scope: Construct,
  resources: SecurityPipelineResources,
  settings: { readonly vendorKeys: 'single' | 'per-api'; readonly rotationEnabled: boolean },
): ConfigIssue[] {
  const findings: Findings = { issues: [], warnings: [] };
  const { inputBucket, resultsBucket, alarmTopic, vendorKeySecret, vendorKeySecrets } = resources;
  if (inputBucket !== undefined && resultsBucket !== undefined && sameResource(inputBucket, resultsBucket)) {
    // Every results write would be an S3 event matched against the intake's rules.
    findings.issues.push({
      setting: 'props.resultsBucket',
      problem: 'must not be props.inputBucket: uploads start runs, so results need a bucket of their own',
    });
  }
  if (inputBucket !== undefined) checkBucket(inputBucket, 'inputBucket', findings);
  if (resultsBucket !== undefined) checkBucket(resultsBucket, 'resultsBucket', findings);
  if (alarmTopic !== undefined) checkAlarmTopic(alarmTopic, findings);
  if (vendorKeySecret !== undefined) {
    if (settings.vendorKeys === 'single') {
      checkVendorKeySecret(vendorKeySecret, 'props.vendorKeySecret', settings.rotationEnabled, findings);
    } else {
      findings.issues.push({
        setting: 'props.vendorKeySecret',
        problem:
          "is for vendor.keys 'single' only: in per-api mode bring each API's secret as props.vendorKeySecrets.<api>",
      });
    }
  }
  checkApiKeySecrets(vendorKeySecrets ?? {}, settings, findings);
  for (const warning of findings.warnings) {
    Annotations.of(scope).addWarningV2('security-pipeline:broughtResourceUnchecked', warning);
  }
  return findings.issues;
}

/** The L1 resource of a construct defined in this app, or undefined for an imported one. */
function definedHere<T>(resource: Construct, type: abstract new (...args: never[]) => T): T | undefined {
  const child = resource.node.defaultChild;
  return child instanceof type ? child : undefined;
}

function sameResource(a: Construct, b: Construct): boolean {
  return a === b || a.node.path === b.node.path;
}

const BUCKET_RULES =
  'versioned, SSL-only (a bucket policy denying aws:SecureTransport false), S3 Block Public Access on, SSE-S3 or SSE-KMS encryption (import a KMS-encrypted bucket with Bucket.fromBucketAttributes({ encryptionKey }), so its key is granted)';

/**
 * Versioning: intake names each run's execution by the uploaded object's version, so an
 * unversioned input bucket would start one run per upload only by chance.
 * SSE-KMS: reading or writing an object under a KMS key also needs kms:Decrypt/GenerateDataKey on
 * the key: the roles get them for the bucket's `encryptionKey` (lib/platform/customer-keys.ts).
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html
 */
function checkBucket(bucket: IBucket, prop: BucketProp, findings: Findings): void {
  const setting = `props.${prop}`;
  const cfn = definedHere(bucket, CfnBucket);
  if (cfn === undefined) {
    findings.warnings.push(
      `${setting} is imported, so its rules cannot be checked here: it must be ${BUCKET_RULES}`,
    );
    if (prop === 'inputBucket') enableImportedEventBridge(bucket);
    return;
  }
  const problem = (text: string) => findings.issues.push({ setting, problem: text });
  const versioning = cfn.versioningConfiguration as CfnBucket.VersioningConfigurationProperty | undefined;
  if (Token.isUnresolved(versioning) || versioning?.status !== 'Enabled') {
    problem('must be versioned (versioned: true): runs are named by the uploaded object version');
  }
  const block = cfn.publicAccessBlockConfiguration as
    | CfnBucket.PublicAccessBlockConfigurationProperty
    | undefined;
  const blocked =
    block !== undefined &&
    !Token.isUnresolved(block) &&
    [
      block.blockPublicAcls,
      block.blockPublicPolicy,
      block.ignorePublicAcls,
      block.restrictPublicBuckets,
    ].every((flag) => flag === true);
  if (!blocked)
    problem(
      'must block all public access (blockPublicAccess: BLOCK_ALL): it holds scan results and personal data',
    );
  if (!deniesInsecureTransport(bucket)) {
    problem('must be SSL-only (enforceSSL: true): a policy denying requests with aws:SecureTransport false');
  }
  if (prop === 'inputBucket') {
    // The same setting PipelineStorage makes on its own input bucket: natively, without CDK's
    // notifications custom resource. https://docs.aws.amazon.com/AmazonS3/latest/userguide/EventBridge.html
    cfn.addPropertyOverride('NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled', true);
  }
}

/**
 * EventBridge delivery on an imported input bucket, through CDK's bucket notifications custom
 * resource in its unmanaged mode: S3's PutBucketNotificationConfiguration replaces the whole
 * configuration, so the handler first reads the bucket's configuration and writes back every
 * notification it did not add, with EventBridge on. Without it, uploads would start nothing.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketNotificationConfiguration.html
 */
function enableImportedEventBridge(bucket: IBucket): void {
  bucket.enableEventBridgeNotification();
  // CDK's one handler per stack for every bucket's notifications (its id is CDK's, fixed).
  const handler = Stack.of(bucket).node.tryFindChild(NOTIFICATIONS_HANDLER_ID);
  if (handler === undefined)
    throw new Error(`${bucket.node.path}: CDK added no bucket notifications handler`);
  acknowledge(
    handler,
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    "CDK's bucket notifications handler (aws-cdk-lib's own function): its role is CDK's, with only log writing from the managed policy besides the bucket's notification configuration.",
  );
}

const NOTIFICATIONS_HANDLER_ID = 'BucketNotificationsHandler050a0587b7544547bf325f094a3db834';

function deniesInsecureTransport(bucket: IBucket): boolean {
  const statements = bucket.policy?.document.toJSON()?.Statement as
    | { Effect?: string; Condition?: { Bool?: Record<string, unknown> } }[]
    | undefined;
  return (statements ?? []).some(
    (statement) =>
      statement.Effect === 'Deny' && String(statement.Condition?.Bool?.['aws:SecureTransport']) === 'false',
  );
}

/**
 * CloudWatch publishes alarm notifications as itself, and its KMS requests through SNS need the
 * topic's key to allow it: a topic under the AWS managed SNS key cannot receive alarms.
 * AlarmNotifications adds CloudWatch's statements to a topic and key defined in this app.
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
 */
function checkAlarmTopic(topic: ITopic, findings: Findings): void {
  const cfn = definedHere(topic, CfnTopic);
  if (cfn === undefined) {
    findings.warnings.push(
      'props.alarmTopic is imported, so its policies cannot be checked or extended here: its topic policy must let cloudwatch.amazonaws.com publish, and when encrypted its customer managed key must let CloudWatch use kms:Decrypt and kms:GenerateDataKey*',
    );
    return;
  }
  if (isAwsManagedSnsKey(cfn.kmsMasterKeyId, topic.masterKey)) {
    findings.issues.push({
      setting: 'props.alarmTopic',
      problem:
        'must not be encrypted with the AWS managed key alias/aws/sns: CloudWatch cannot use it; use a customer managed key',
    });
  } else if (topic.masterKey !== undefined && !(topic.masterKey instanceof Key)) {
    findings.warnings.push(
      "props.alarmTopic's KMS key is imported, so its policy cannot be extended here: it must let cloudwatch.amazonaws.com use kms:Decrypt and kms:GenerateDataKey*",
    );
  }
}

/** The topic's key is `alias/aws/sns`: given by alias (`Alias.fromAliasName`) or as the literal id. */
function isAwsManagedSnsKey(keyId: unknown, key: ITopic['masterKey']): boolean {
  const aliasName = (key as { aliasName?: unknown } | undefined)?.aliasName;
  if (aliasName === 'alias/aws/sns') return true;
  return typeof keyId === 'string' && !Token.isUnresolved(keyId) && /(^|[/:])(alias\/)?aws\/sns$/.test(keyId);
}

/**
 * The handlers read `{"apiKey": …}` JSON or a bare key string (lambdas/platform/secrets.ts), so a
 * generated value that is a bare string, or that fills `apiKey`, would be sent to the vendor as the
 * key. A customer managed key needs kms:Decrypt for GetSecretValue: the roles get it for the secret's
 * `encryptionKey` (lib/platform/customer-keys.ts).
 * https://docs.aws.amazon.com/secretsmanager/latest/userguide/security-encryption.html
 */
function checkVendorKeySecret(
  secret: ISecret,
  setting: string,
  rotatedByPipeline: boolean,
  findings: Findings,
): void {
  const problem = (text: string) => findings.issues.push({ setting, problem: text });
  const cfn = definedHere(secret, CfnSecret);
  if (cfn === undefined) {
    findings.warnings.push(
      `${setting} is imported, so its rules cannot be checked here: it must hold {"apiKey": "…"} JSON, be encrypted with the AWS managed key aws/secretsmanager or a customer managed key (import it with Secret.fromSecretAttributes({ encryptionKey }), so the key is granted)` +
        (rotatedByPipeline ? ', and have no rotation of its own (rotation.enabled adds the pipeline’s)' : ''),
    );
    return;
  }
  if (typeof cfn.secretString === 'string' && !Token.isUnresolved(cfn.secretString)) {
    problem(
      'must not hold its value in the template: create it with a placeholder and put the key in after deploying',
    );
  }
  const generated = cfn.generateSecretString as CfnSecret.GenerateSecretStringProperty | undefined;
  if (generated !== undefined && !Token.isUnresolved(generated)) {
    const generatesKey = (API_KEY_FIELDS as readonly (string | undefined)[]).includes(
      generated.generateStringKey,
    );
    if (generated.secretStringTemplate === undefined || generatesKey) {
      problem(
        'must not generate the key: a generated bare string or apiKey field would be sent to the vendor as the key (generate a JSON template without apiKey, e.g. {"placeholder": "…"})',
      );
    }
  }
  if (rotatedByPipeline && secret.node.children.some((child) => child instanceof RotationSchedule)) {
    problem(
      'must have no rotation schedule of its own while rotation.enabled is true: a secret has one rotation',
    );
  }
}

/**
 * Per-API key secrets: per-api mode only, each named by a vendor API the pipeline calls, each under
 * the rules of the org key's secret. The `keys` API's secret is the one native rotation rotates
 * (ORG_KEY_API, SecurityPipeline.rotateOrgKey).
 */
function checkApiKeySecrets(
  secrets: { readonly [A in VendorApi]?: ISecret },
  settings: { readonly vendorKeys: 'single' | 'per-api'; readonly rotationEnabled: boolean },
  findings: Findings,
): void {
  const brought = Object.entries(secrets).filter(([, secret]) => secret !== undefined);
  if (brought.length === 0) return;
  if (settings.vendorKeys !== 'per-api') {
    findings.issues.push({
      setting: 'props.vendorKeySecrets',
      problem:
        "is for vendor.keys 'per-api' only: in single mode bring the one org key as props.vendorKeySecret",
    });
    return;
  }
  for (const [api, secret] of brought) {
    const setting = `props.vendorKeySecrets.${api}`;
    if (!(VENDOR_APIS as readonly string[]).includes(api)) {
      findings.issues.push({
        setting,
        problem: `names no vendor API (expected one of ${VENDOR_APIS.join(', ')})`,
      });
      continue;
    }
    const rotated = settings.rotationEnabled && api === ORG_KEY_API;
    checkVendorKeySecret(secret as ISecret, setting, rotated, findings);
  }
}
