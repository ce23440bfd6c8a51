/**
 * S3's request limits the pipeline's bounds are held to. Plain data with no imports, so that the
 * configuration schema and the constructs take them without bundling the S3 client.
 */

/** CopyObject's limit for a single request. */
export const MAX_COPY_OBJECT_BYTES = 5 * 1024 * 1024 * 1024;
