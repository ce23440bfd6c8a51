/**
 * What a Distributed Map's ResultWriter leaves in S3: a manifest naming result files, each a JSON
 * array of one entry per iteration (its Input, and its Output or Error/Cause, as JSON strings).
 * Each fan-out workflow (domain lists, watchlists) maps the entries onto its own results.
 */
import { getJson } from '#lambdas/platform/s3/json-objects';
import { isRecord, parseJsonBody } from '#lambdas/vendor-api/transport/json';

interface ResultWriterManifest {
  readonly ResultFiles?: Record<string, readonly { readonly Key: string }[]>;
}

interface ResultWriterEntry {
  readonly Input?: string;
  readonly Output?: string;
  readonly Error?: string;
  readonly Cause?: string;
}

/** One iteration, its JSON strings parsed: `output` when it succeeded, `error`/`cause` when not. */
export interface IterationResult {
  readonly input: Record<string, unknown> | undefined;
  readonly output: unknown;
  readonly error: string | undefined;
  readonly cause: string | undefined;
}

interface StorageDeps {
  readonly s3: Parameters<typeof getJson>[0]['s3'];
  readonly settings: { readonly resultsBucket: string };
}

/** Every iteration of every result file the ResultWriter's manifest lists. */
export async function readIterationResults(
  deps: StorageDeps,
  location: { readonly ResultWriterDetails: { readonly Bucket: string; readonly Key: string } },
): Promise<IterationResult[]> {
  const { Bucket, Key } = location.ResultWriterDetails;
  const manifest = await getJson<ResultWriterManifest>(deps, Bucket, Key);
  const results: IterationResult[] = [];
  for (const files of Object.values(manifest.ResultFiles ?? {})) {
    for (const file of files) {
      for (const entry of await getJson<ResultWriterEntry[]>(deps, Bucket, file.Key)) {
        const input = tryJson(entry.Input);
        results.push({
          input: isRecord(input) ? input : undefined,
          output: tryJson(entry.Output),
          error: entry.Error,
          cause: entry.Cause,
        });
      }
    }
  }
  return results;
}

/** Step Functions hands outputs and causes over as JSON strings; anything else passes through. */
export function tryJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const parsed = parseJsonBody(value);
  return parsed.ok ? parsed.value : undefined;
}

/**
 * DescribeExecution calls a summary makes at once for a redriven run's children. The API is
 * throttled per account and Region with a token bucket shared by every caller (the console, the
 * other runs' summaries); an unbounded burst of 100,000 would drain it and fail on
 * ThrottlingException after the SDK's retries
 * (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html, "Quotas related to
 * API action throttling"). At 10 in flight and ~30 ms a call, some 300 a second at most: the SDK's
 * backoff absorbs what the bucket's refill cannot.
 */
export const DESCRIBE_EXECUTION_CONCURRENCY = 10;

/** The part of Step Functions the summary uses: looking up a child execution that already ran. */
export interface ExecutionLookup {
  describe(executionName: string): Promise<
    | { readonly status: 'SUCCEEDED'; readonly output: string | undefined }
    | {
        readonly status: 'FAILED' | 'TIMED_OUT' | 'ABORTED';
        readonly error: string | undefined;
        readonly cause: string | undefined;
      }
    | { readonly status: 'RUNNING' | 'PENDING_REDRIVE' | string }
  >;
}
