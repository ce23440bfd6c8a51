/**
 * The list workflow tests' S3: s3rver with an input and a results bucket for the file, and ListDeps
 * over it with a fixed clock. `s3` and `deps` are live bindings, set by useListBed's beforeAll.
 */
import { afterAll, beforeAll } from 'vitest';
import type { ListDeps } from '#lambdas/domain-list/deps';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';

export const INPUT = 'input-bucket';
export const RESULTS = 'results-bucket';
const silent: VendorLogger = { debug() {}, info() {}, warn() {}, error() {} };

export let s3: S3rverFixture;
export let deps: ListDeps;

export function useListBed(): void {
  beforeAll(async () => {
    s3 = await startS3rver({ buckets: [INPUT, RESULTS] });
    deps = {
      s3: s3.client,
      logger: silent,
      settings: { resultsBucket: RESULTS, inputBucket: INPUT },
      clock: () => new Date('2026-11-21T10:00:00Z'),
    };
  });

  afterAll(async () => {
    await s3.close();
  });
}
