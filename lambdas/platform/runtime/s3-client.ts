/**
 * The S3 client of a function that lambdas/registry.ts gives object access, traced by its Tracer.
 * A module of its own so that functions without object access never bundle the S3 client.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { Observability } from '#lambdas/platform/runtime/observability';

export function tracedS3Client(tools: Pick<Observability, 'tracer'>): S3Client {
  return tools.tracer.captureAWSv3Client(new S3Client({}));
}
