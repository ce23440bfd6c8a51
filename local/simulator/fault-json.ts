/**
 * Fault rules as the HTTP control plane receives them (`POST /__simulator/faults`): JSON turned
 * into a FaultRule, validated by the same checks as rules added in code.
 */
import { validateFaultRule } from './faults.ts';
import type { Fault, FaultRule, SimulatedApi } from './types.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `"prefix"` or `{"regex": "...", "flags": "i"}`, as the HTTP control plane receives them. */
export function patternFromJson(value: unknown, field: string): string | RegExp {
  if (typeof value === 'string') return value;
  if (isRecord(value) && typeof value.regex === 'string') {
    const flags = typeof value.flags === 'string' ? value.flags : '';
    try {
      return new RegExp(value.regex, flags);
    } catch (error) {
      throw new TypeError(`${field}.regex is not a valid regular expression: ${(error as Error).message}`);
    }
  }
  throw new TypeError(`${field} must be a string or {"regex": "..."}`);
}

/** Builds a rule from control-plane JSON; throws a TypeError that names the bad field. */
export function faultRuleFromJson(value: unknown): FaultRule {
  if (!isRecord(value)) throw new TypeError('fault rule must be a JSON object');
  const { api, method, path, times, probability, fault } = value;
  const rule: FaultRule = {
    ...(api === undefined ? {} : { api: api as SimulatedApi }),
    ...(method === undefined ? {} : { method: String(method).toUpperCase() }),
    ...(path === undefined ? {} : { path: patternFromJson(path, 'path') }),
    ...(times === undefined ? {} : { times: times as number }),
    ...(probability === undefined ? {} : { probability: probability as number }),
    fault: fault as Fault,
  };
  if (!isRecord(fault)) throw new TypeError('fault rule needs a "fault" object with a "type"');
  validateFaultRule(rule);
  return rule;
}
