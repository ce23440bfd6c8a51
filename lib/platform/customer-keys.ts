/**
 * Grants on the customer managed KMS key of a brought bucket or secret. S3 and Secrets Manager use
 * the key on the caller's behalf, so the caller needs it too: kms:Decrypt to read, and
 * kms:GenerateDataKey (plus kms:Decrypt, which a multipart upload and a copy's source read use) to
 * write. Each grant holds only through that service in the stack's Region (kms:ViaService), never a
 * direct call. The key's own policy must allow the account's IAM policies (a default key policy does).
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html
 * https://docs.aws.amazon.com/secretsmanager/latest/userguide/security-encryption.html
 */
import { Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';

/** Reads, or reads and writes, through the service that encrypts with the key. */
export type KeyUse = 'read' | 'write';

const KEY_ACTIONS: Readonly<Record<KeyUse, readonly string[]>> = {
  read: ['kms:Decrypt'],
  write: ['kms:Decrypt', 'kms:GenerateDataKey'],
};

/** S3 object actions that only read objects; any other object action writes (or deletes). */
const S3_READS = new Set(['GetObject', 'GetObjectVersion', 'GetObjectAttributes', 'GetObjectTagging']);

/** The key use S3 object `actions` (without the `s3:` prefix) need, or undefined for none. */
export function s3KeyUse(actions: readonly string[]): KeyUse | undefined {
  const objectActions = actions.filter((action) => action !== 'ListBucket');
  if (objectActions.length === 0) return undefined;
  return objectActions.every((action) => S3_READS.has(action)) ? 'read' : 'write';
}

/** The grant `grantee` needs on `bucket`'s customer managed key, if it has one. */
export function grantBucketKey(grantee: IGrantable, bucket: IBucket, use: KeyUse | undefined): void {
  if (use !== undefined && bucket.encryptionKey !== undefined) {
    grantKeyVia(grantee, bucket.encryptionKey, 's3', use);
  }
}

/** The grant `grantee` needs on `secret`'s customer managed key, if it has one. */
export function grantSecretKey(grantee: IGrantable, secret: ISecret, use: KeyUse): void {
  if (secret.encryptionKey !== undefined) grantKeyVia(grantee, secret.encryptionKey, 'secretsmanager', use);
}

function grantKeyVia(grantee: IGrantable, key: IKey, service: string, use: KeyUse): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...KEY_ACTIONS[use]],
      resources: [key.keyArn],
      conditions: {
        StringEquals: { 'kms:ViaService': `${service}.${Stack.of(key).region}.amazonaws.com` },
      },
    }),
  );
}
