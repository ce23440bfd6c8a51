/**
 * Reads a byte stream front to back in exact amounts: a header of so many bytes, the next so many
 * bytes as chunks, a gap skipped. What the single pass over a ZIP's entries needs; an end of the
 * stream before the amount asked for is an error (`TruncatedError`).
 */
export class TruncatedError extends Error {
  override readonly name = 'TruncatedError';
}

export class ByteCursor {
  /** Bytes handed out or skipped so far (the offset in the stream). */
  position = 0;
  /** The stream's own failure (the S3 read), kept apart from what the bytes say. */
  sourceError: unknown;
  private buffered: Buffer = Buffer.alloc(0);

  constructor(
    private readonly source: AsyncIterator<Buffer>,
    startOffset = 0,
  ) {
    this.position = startOffset;
  }

  /** Exactly `n` bytes (a copy only when they span chunks). */
  async exactly(n: number): Promise<Buffer> {
    while (this.buffered.length < n) {
      if (!(await this.fill()))
        throw new TruncatedError(`the archive ends within ${n} bytes at offset ${this.position}`);
    }
    const out = this.buffered.subarray(0, n);
    this.buffered = this.buffered.subarray(n);
    this.position += n;
    return out;
  }

  /** The next `n` bytes, as the chunks they arrive in. */
  async *chunks(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.buffered.length === 0 && !(await this.fill())) {
        throw new TruncatedError(`the archive ends ${left} bytes short at offset ${this.position}`);
      }
      const size = Math.min(left, this.buffered.length);
      const out = this.buffered.subarray(0, size);
      this.buffered = this.buffered.subarray(size);
      this.position += size;
      left -= size;
      yield out;
    }
  }

  /** Moves to `offset`, at or after the current position. */
  async skipTo(offset: number): Promise<void> {
    for await (const _ of this.chunks(offset - this.position)) {
      // discarded: the bytes between entries (data descriptors, padding)
    }
  }

  private async fill(): Promise<boolean> {
    let next: IteratorResult<Buffer>;
    try {
      next = await this.source.next();
    } catch (error) {
      this.sourceError ??= error;
      throw error;
    }
    if (next.done) return false;
    this.buffered = this.buffered.length === 0 ? next.value : Buffer.concat([this.buffered, next.value]);
    return true;
  }
}
