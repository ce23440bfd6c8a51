/** Runs `act` and returns the error it throws when that is an `ErrorType`; fails on anything else. */
export function thrownBy<E extends Error>(
  ErrorType: abstract new (...args: never[]) => E,
  act: () => unknown,
): E {
  try {
    act();
  } catch (error) {
    if (error instanceof ErrorType) return error;
    throw error;
  }
  throw new Error(`expected a ${ErrorType.name}, but nothing was thrown`);
}
