/**
 * What the least-privilege tests record: the IAM actions each handler's calls need, attributed to
 * the handler running them (the local runner's AsyncLocalStorage, local/services/iam/attribution.ts), and the
 * actions the synthesized template grants it. The same runs are also evaluated against the
 * synthesized policies (local/services/iam/evaluator.ts), so a call the grants do not cover fails there.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { HandlerFile } from '../../lambdas/registry.ts';
import { currentHandler, runAs } from '../../local/services/iam/attribution.ts';
import { createIamEvaluator, type IamEvaluator } from '../../local/services/iam/evaluator.ts';
import { iamViewOf } from '../../local/services/iam/view.ts';
import { actionsAllowed, functionFor, grantsOf, type Synthesized } from '../kit/synth.ts';

/**
 * The IAM actions S3 evaluates for a command. The deployed buckets are versioned (asserted below),
 * so the version id the upload returns is always set there and the copy reads that version
 * (GetObjectVersion); s3rver has no versioning, so that is derived, not observed. Deletes by
 * version id (DeleteObjectVersion) are not derived: the tests list them as unreachable here.
 */
function s3Actions(command: string, input: Record<string, unknown>): string[] {
  switch (command) {
    case 'PutObjectCommand':
    case 'CreateMultipartUploadCommand':
    case 'UploadPartCommand':
      return ['s3:PutObject'];
    case 'CompleteMultipartUploadCommand':
      // If-Match also needs s3:GetObject; If-None-Match only s3:PutObject
      // (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html).
      return input.IfMatch ? ['s3:PutObject', 's3:GetObject'] : ['s3:PutObject'];
    case 'UploadPartCopyCommand':
      // Its source is named by version id in the versioned buckets, like CopyObject's.
      return ['s3:GetObjectVersion', 's3:PutObject'];
    case 'AbortMultipartUploadCommand':
      return ['s3:AbortMultipartUpload'];
    case 'CopyObjectCommand':
      return ['s3:GetObjectVersion', 's3:PutObject'];
    case 'GetObjectCommand':
    case 'HeadObjectCommand':
      return [input.VersionId ? 's3:GetObjectVersion' : 's3:GetObject'];
    case 'ListObjectsV2Command':
      return ['s3:ListBucket'];
    case 'DeleteObjectCommand':
      return [input.VersionId ? 's3:DeleteObjectVersion' : 's3:DeleteObject'];
    case 'DeleteObjectsCommand': {
      const objects = (input.Delete as { Objects?: { VersionId?: string }[] } | undefined)?.Objects ?? [];
      return [...new Set(objects.map((o) => (o.VersionId ? 's3:DeleteObjectVersion' : 's3:DeleteObject')))];
    }
    default:
      throw new Error(`least-privilege test: no IAM mapping for ${command}; add one`);
  }
}

/** IAM actions each handler was seen using, across the whole test file. */
export const used = new Map<HandlerFile, Set<string>>();

/** Runs `body` as `handler`: every recorded use inside it counts for that handler. */
export function asHandler<T>(handler: HandlerFile, body: () => Promise<T>): Promise<T> {
  return runAs(handler, body);
}

export function recordUse(action: string): void {
  const handler = currentHandler() as HandlerFile | undefined;
  if (handler === undefined) return;
  const actions = used.get(handler) ?? new Set<string>();
  actions.add(action);
  used.set(handler, actions);
}

export function recordingS3(client: S3Client): S3Client {
  client.middlewareStack.add(
    (next, context) => (args) => {
      for (const action of s3Actions(String(context.commandName), args.input as Record<string, unknown>)) {
        recordUse(action);
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordIamActions' },
  );
  return client;
}

/** The S3, Secrets Manager and Step Functions actions the template grants the handler's function. */
export function grantedActions(synthesized: Synthesized, handler: HandlerFile): Set<string> {
  const grants = grantsOf(synthesized, functionFor(synthesized, handler).roleLogicalId);
  return new Set(actionsAllowed(grants).filter((a) => /^(s3|secretsmanager|states|events):/.test(a)));
}

/**
 * An evaluator over the synthesized template's policies, with the test's bucket names standing for
 * the stack's buckets.
 */
export function evaluatorFor(
  synthesized: Synthesized,
  buckets: { readonly results: string; readonly input?: string },
): { readonly iam: IamEvaluator; readonly orgKeySecretArn: string } {
  const view = iamViewOf(synthesized.json);
  const orgKeySecretArn = view.rotatedSecrets[0];
  if (!view.buckets.results || !orgKeySecretArn)
    throw new Error('the template has no results bucket or org key');
  const iam = createIamEvaluator(view, {
    buckets: {
      [buckets.results]: view.buckets.results,
      ...(buckets.input && view.buckets.input ? { [buckets.input]: view.buckets.input } : {}),
    },
  });
  return { iam, orgKeySecretArn };
}
