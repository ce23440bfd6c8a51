/**
 * Runs an async step over many items with at most `limit` in flight: S3 answers a Lambda function
 * in 10-30 ms a request, so one request after another turns 100,000 small writes into most of an
 * hour, while all at once would exhaust sockets and memory. The first failure stops new starts
 * and is thrown once the ones in flight have settled.
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  step: (item: T, index: number) => Promise<void>,
): Promise<void> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a whole number of at least 1, got ${limit}`);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next;
      next += 1;
      try {
        await step(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}

/** {@link forEachBounded}, keeping each item's result in the items' order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  step: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  await forEachBounded(items, limit, async (item, index) => {
    results[index] = await step(item, index);
  });
  return results;
}
