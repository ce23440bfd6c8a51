/** Reading the stand-in's operation inputs, and the service's errors for bad ones. */
import { InvalidParameterException, ResourceNotFoundException } from '@aws-sdk/client-secrets-manager';

export type Input = Record<string, unknown>;
export const meta = { $metadata: { httpStatusCode: 400 } };

export function notFound(message: string): ResourceNotFoundException {
  return new ResourceNotFoundException({ message, ...meta });
}

export function requiredString(input: Input, field: string): string {
  const value = input[field];
  if (typeof value !== 'string' || value === '') {
    throw new InvalidParameterException({ message: `${field} is required.`, ...meta });
  }
  return value;
}

export function optionalString(input: Input, field: string): string | undefined {
  const value = input[field];
  return typeof value === 'string' ? value : undefined;
}

/** A call's input with secret values blanked, so the call log can be printed or asserted on. */
export function withoutValues(input: Input): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...input };
  for (const field of ['SecretString', 'SecretBinary']) if (field in copy) copy[field] = '<value>';
  return copy;
}
