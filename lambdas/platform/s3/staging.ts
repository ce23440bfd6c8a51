/**
 * The results bucket's prefix for uploads not yet proven complete: a workflow stages a large
 * upload here, verifies it, copies it to its final key and deletes the staged version, so this is
 * the only prefix where a function may delete an object version. The bucket's lifecycle expires
 * what a crash leaves here (lib/platform/pipeline-storage.ts).
 */
export const STAGING_PREFIX = 'staging/';
