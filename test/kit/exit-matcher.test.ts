import { describe, expect, it } from 'vitest';

describe('toExitWith', () => {
  it('passes on the exit code, and a mismatch shows the tail of what the run printed', () => {
    // Prepare
    const stdout = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n');
    const run = { code: 1, stdout, stderr: 'error: the vendor refused the key\n' };

    // Act
    const mismatch = () => expect(run).toExitWith(0);

    // Assess
    expect(run).toExitWith(1);
    expect(mismatch).toThrow(/expected the run to exit 0, it exited 1/);
    expect(mismatch).toThrow(
      /… \(10 earlier lines\)\nline 11\n[\s\S]*line 50\n--- stderr \(tail\) ---\nerror: the vendor refused the key$/,
    );
    expect(() => expect(run).not.toExitWith(1)).toThrow(/exit with anything but 1, it exited 1/);
  });
});
