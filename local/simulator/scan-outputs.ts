/**
 * The scan outputs the simulated vendor serves, one answer per path (seed 000: report, logs,
 * debug). The routes of scan-api.ts are made from this map: a vendor output the pipeline's table
 * (lambdas/scan/scan-outputs.ts) gains is one answer here. The simulator stays the vendor's
 * stand-in: it does not read the pipeline's table.
 */
import { type ContentSource, generate, type OutputContent } from './content.ts';

/** The simulator's size options an answer may read (of its resolved options). */
export interface OutputSizes {
  readonly reportBytes: number;
  readonly logsBytes: number;
  readonly debugBytes: number;
}

export interface OutputAnswer {
  /** Names the output in errors, and keys its cached length and ETag per scan. */
  readonly name: string;
  readonly contentType: string;
  /** The body's approximate size, from the simulator's options. */
  readonly bytes: (sizes: OutputSizes) => number;
  /** A failed scan still has it (logs and debug tell why it failed; there is no report). */
  readonly availableWhenFailed: boolean;
  /** Sent gzip-encoded to a client that accepts gzip, so that content decoding is exercised. */
  readonly gzipWhenAccepted: boolean;
  /** The bytes: a function of the scan alone, so every download of an output is identical. */
  readonly content: OutputContent;
}

const generated =
  (kind: 'report' | 'logs' | 'debug'): OutputContent =>
  (source: ContentSource, targetBytes: number) =>
    generate(kind, source, targetBytes);

/** Answers by vendor path; `{uuid}` is the scan's uuid. */
export type OutputAnswers = Readonly<Record<`/${string}/{uuid}`, OutputAnswer>>;

export const SCAN_OUTPUT_ANSWERS: OutputAnswers = {
  '/report/{uuid}': {
    name: 'report',
    contentType: 'application/json',
    bytes: (options) => options.reportBytes,
    availableWhenFailed: false,
    gzipWhenAccepted: false,
    content: generated('report'),
  },
  '/logs/{uuid}': {
    name: 'logs',
    contentType: 'text/plain; charset=utf-8',
    bytes: (options) => options.logsBytes,
    availableWhenFailed: true,
    gzipWhenAccepted: true,
    content: generated('logs'),
  },
  '/debug/{uuid}': {
    name: 'debug',
    contentType: 'application/x-ndjson',
    bytes: (options) => options.debugBytes,
    availableWhenFailed: true,
    gzipWhenAccepted: false,
    content: generated('debug'),
  },
};
