/**
 * s3rver 3.7 ships no type declarations. This covers the part of its API the test helper uses.
 */
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    readonly address?: string;
    readonly port?: number;
    readonly silent?: boolean;
    readonly directory?: string;
    readonly resetOnClose?: boolean;
    readonly allowMismatchedSignatures?: boolean;
    readonly vhostBuckets?: boolean;
    readonly configureBuckets?: readonly { readonly name: string; readonly configs?: readonly string[] }[];
  }

  export default class S3rver {
    constructor(options?: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    reset(): void;
    /** The filesystem store (an internal, used to scope its listings; see embedded-s3.ts). */
    readonly store: unknown;
  }
}
