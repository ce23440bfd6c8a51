/**
 * One object's file, shared between s3rver's readers and writers the way S3 shares an object: a
 * reader sees one whole version, never a mix or a part. Readers share the gate while they open the
 * file and read its sidecars (ETag, metadata); a writer holds it alone while it puts a new version
 * in place. Once a reader has opened the file, a replacement by rename no longer touches what it
 * reads; a write that must change the file in place first waits for the streams still reading it.
 */
import type { Readable } from 'node:stream';

type Waiter = { readonly kind: 'read' | 'write'; readonly grant: () => void };

interface PathState {
  readers: number;
  writing: boolean;
  readonly queue: Waiter[];
  /** Streams opened on the file that have not closed yet. */
  streams: number;
  readonly drained: (() => void)[];
}

/**
 * How long a write that changes a file in place waits for streams still reading it: a client that
 * never reads the body it asked for must not stop every later write (it then may see the change).
 */
export const STREAM_DRAIN_TIMEOUT_MS = 30_000;

export class KeyGate {
  private readonly paths = new Map<string, PathState>();

  /** Runs `read` while no writer holds `path`; readers run together. */
  async read<T>(path: string, read: () => Promise<T>): Promise<T> {
    await this.acquire(path, 'read');
    try {
      return await read();
    } finally {
      this.release(path, 'read');
    }
  }

  /** Runs `write` alone on `path`, after the readers before it. */
  async write<T>(path: string, write: () => Promise<T>): Promise<T> {
    await this.acquire(path, 'write');
    try {
      return await write();
    } finally {
      this.release(path, 'write');
    }
  }

  /** Counts `stream` as reading `path` until it closes. */
  track(path: string, stream: Readable | null | undefined): void {
    if (!stream) return;
    const state = this.state(path);
    state.streams += 1;
    stream.once('close', () => {
      state.streams -= 1;
      if (state.streams === 0) for (const done of state.drained.splice(0)) done();
      this.forget(path, state);
    });
  }

  /** Resolves once no stream reads `path`, or after {@link STREAM_DRAIN_TIMEOUT_MS}. */
  async drain(path: string): Promise<void> {
    const state = this.state(path);
    if (state.streams === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, STREAM_DRAIN_TIMEOUT_MS);
      state.drained.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private state(path: string): PathState {
    let state = this.paths.get(path);
    if (!state) {
      state = { readers: 0, writing: false, queue: [], streams: 0, drained: [] };
      this.paths.set(path, state);
    }
    return state;
  }

  private acquire(path: string, kind: Waiter['kind']): Promise<void> {
    const state = this.state(path);
    // Readers wait behind a queued writer, so a stream of readers cannot starve it.
    const free =
      kind === 'read'
        ? !state.writing && state.queue.length === 0
        : !state.writing && state.readers === 0 && state.queue.length === 0;
    if (free) {
      if (kind === 'read') state.readers += 1;
      else state.writing = true;
      return Promise.resolve();
    }
    return new Promise((grant) => state.queue.push({ kind, grant }));
  }

  private release(path: string, kind: Waiter['kind']): void {
    const state = this.state(path);
    if (kind === 'read') state.readers -= 1;
    else state.writing = false;
    while (state.queue.length > 0 && !state.writing) {
      const next = state.queue[0] as Waiter;
      if (next.kind === 'write' && state.readers > 0) break;
      state.queue.shift();
      if (next.kind === 'read') state.readers += 1;
      else state.writing = true;
      next.grant();
    }
    this.forget(path, state);
  }

  /** Drops the state of a path nobody uses, so the map stays as small as the work in flight. */
  private forget(path: string, state: PathState): void {
    if (state.readers === 0 && !state.writing && state.queue.length === 0 && state.streams === 0) {
      this.paths.delete(path);
    }
  }
}
