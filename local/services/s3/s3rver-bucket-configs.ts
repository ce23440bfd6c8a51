/**
 * s3rver 3.7 reads a bucket's CORS and website configurations from their files on every request
 * (its `cors` and `website` middleware), and a bucket without them answers each read with a
 * missing file: two failed reads, and their errors, per S3 call. The embedded S3's buckets never
 * get either configuration, so this remembers that a bucket has none until one is written through
 * the store (or the bucket is made or removed again); a configuration that exists is read as
 * before. Only this process writes the store's folder, so what it remembers stays true.
 */

/** The part of s3rver's FilesystemStore the configurations go through. */
export interface ConfigStore {
  getSubresource(bucket: string, key: string | undefined, type: string): Promise<unknown>;
  putSubresource(bucket: string, key: string | undefined, resource: { readonly type: string }): Promise<void>;
  putBucket(bucket: string): Promise<unknown>;
  deleteBucket(bucket: string): Promise<unknown>;
}

export function rememberMissingBucketConfigs(store: ConfigStore): void {
  /** `<bucket>\0<type>` of the bucket configurations known to be missing. */
  const missing = new Set<string>();
  /** Bumped by every write, so a read that raced one remembers nothing. */
  let writes = 0;
  const forget = (bucket: string) => {
    writes += 1;
    for (const entry of [...missing]) if (entry.startsWith(`${bucket}\0`)) missing.delete(entry);
  };
  const { getSubresource, putSubresource, putBucket, deleteBucket } = store;
  store.getSubresource = async function (this: ConfigStore, bucket, key, type) {
    if (key !== undefined) return getSubresource.call(this, bucket, key, type);
    if (missing.has(`${bucket}\0${type}`)) return null;
    const before = writes;
    const config = await getSubresource.call(this, bucket, key, type);
    if (config === null && writes === before) missing.add(`${bucket}\0${type}`);
    return config;
  };
  store.putSubresource = async function (this: ConfigStore, bucket, key, resource) {
    if (key === undefined) forget(bucket);
    return putSubresource.call(this, bucket, key, resource);
  };
  store.putBucket = async function (this: ConfigStore, bucket) {
    forget(bucket);
    return putBucket.call(this, bucket);
  };
  store.deleteBucket = async function (this: ConfigStore, bucket) {
    forget(bucket);
    return deleteBucket.call(this, bucket);
  };
}
