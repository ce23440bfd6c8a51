/**
 * A small model of how CloudWatch judges one synthesized alarm over one evaluation, for tests that
 * ask what an alarm does on a fresh stack, on a healthy one, and when reports stop. It covers what
 * the pipeline's own alarms use: a single metric, or metric math with IF, FILL, + and comparisons;
 * and the four missing-data treatments
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html):
 * notBreaching -> OK, breaching -> ALARM, missing -> INSUFFICIENT_DATA when every datapoint of the
 * range is missing, ignore -> the state stays. Every period of the range holds the same values, and
 * a datapoint stands for the alarm's statistic (a present ApiKeyAgeDays is a SampleCount >= 1 too).
 */

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

/** Datapoints of one period, by metric name and (when given) its `outcome` or `output` dimension. */
export type Datapoints = Readonly<Record<string, number>>;

interface MetricStat {
  readonly Metric: { readonly MetricName: string; readonly Dimensions?: { Name: string; Value: unknown }[] };
}
interface MetricQuery {
  readonly Id: string;
  readonly Expression?: string;
  readonly MetricStat?: MetricStat;
}
export interface AlarmProperties {
  readonly MetricName?: string;
  readonly Dimensions?: { Name: string; Value: unknown }[];
  readonly Metrics?: readonly MetricQuery[];
  readonly Threshold: number;
  readonly ComparisonOperator: string;
  readonly TreatMissingData?: string;
}

/** `ScansSucceeded`, or `ScansFailed/ScanRejected` for a metric with an `outcome` or `output` dimension. */
function datapoint(
  data: Datapoints,
  name: string,
  dimensions: { Name: string; Value: unknown }[] = [],
): Value {
  const detail = dimensions.find((d) => d.Name === 'outcome' || d.Name === 'output')?.Value;
  return data[typeof detail === 'string' ? `${name}/${detail}` : name];
}

/** The alarm's value for one period: a number, or undefined when the period has no datapoint. */
export function alarmValue(alarm: AlarmProperties, data: Datapoints): number | undefined {
  if (alarm.MetricName !== undefined) return datapoint(data, alarm.MetricName, alarm.Dimensions);
  const queries = alarm.Metrics ?? [];
  const series = new Map<string, number | undefined>();
  for (const q of queries) {
    if (q.MetricStat)
      series.set(q.Id, datapoint(data, q.MetricStat.Metric.MetricName, q.MetricStat.Metric.Dimensions));
  }
  const expression = queries.find((q) => q.Expression !== undefined)?.Expression;
  if (expression === undefined) throw new Error('an alarm with Metrics needs an expression');
  return evaluate(expression, series);
}

/** The state after one evaluation, from `previous` (a new alarm starts in INSUFFICIENT_DATA). */
export function judge(
  alarm: AlarmProperties,
  data: Datapoints,
  previous: AlarmState = 'INSUFFICIENT_DATA',
): AlarmState {
  const value = alarmValue(alarm, data);
  if (value === undefined) {
    switch (alarm.TreatMissingData ?? 'missing') {
      case 'notBreaching':
        return 'OK';
      case 'breaching':
        return 'ALARM';
      case 'ignore':
        return previous;
      default:
        return 'INSUFFICIENT_DATA';
    }
  }
  return breaches(value, alarm.ComparisonOperator, alarm.Threshold) ? 'ALARM' : 'OK';
}

function breaches(value: number, operator: string, threshold: number): boolean {
  switch (operator) {
    case 'GreaterThanThreshold':
      return value > threshold;
    case 'GreaterThanOrEqualToThreshold':
      return value >= threshold;
    case 'LessThanThreshold':
      return value < threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= threshold;
    default:
      throw new Error(`comparison ${operator} is not modelled`);
  }
}

type Value = number | undefined;

/** Recursive descent over IF(c, a, b), FILL(m, v), + - * /, comparisons, numbers and metric ids. */
function evaluate(expression: string, series: ReadonlyMap<string, Value>): Value {
  const tokens = expression.match(/\d+(?:\.\d+)?|[A-Za-z_]\w*|>=|<=|==|!=|[-+*/(),<>]/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (token === undefined || (expected !== undefined && token !== expected)) {
      throw new Error(`cannot model '${expression}' at token ${at}`);
    }
    return token;
  };
  const lift = (a: Value, b: Value, f: (x: number, y: number) => number): Value =>
    a === undefined || b === undefined ? undefined : f(a, b);

  const primary = (): Value => {
    const token = take();
    if (token === '(') {
      const inner = comparison();
      take(')');
      return inner;
    }
    if (/^\d/.test(token)) return Number(token);
    if (token === 'IF' || token === 'FILL') {
      take('(');
      const args = [comparison()];
      while (peek() === ',') {
        take(',');
        args.push(comparison());
      }
      take(')');
      if (token === 'FILL') return args[0] ?? args[1];
      const [condition, then, otherwise] = args;
      return condition === undefined ? undefined : condition !== 0 ? then : otherwise;
    }
    if (!series.has(token))
      throw new Error(`'${expression}' names ${token}, which is not a metric of the alarm`);
    return series.get(token);
  };
  const product = (): Value => {
    let left = primary();
    while (peek() === '*' || peek() === '/') {
      const op = take();
      const right = primary();
      left = lift(left, right, (x, y) => (op === '*' ? x * y : x / y));
    }
    return left;
  };
  const sum = (): Value => {
    let left = product();
    while (peek() === '+' || peek() === '-') {
      const op = take();
      const right = product();
      left = lift(left, right, (x, y) => (op === '+' ? x + y : x - y));
    }
    return left;
  };
  const comparison = (): Value => {
    const left = sum();
    const op = peek();
    if (op === undefined || !['>', '<', '>=', '<=', '==', '!='].includes(op)) return left;
    take();
    const right = sum();
    const tests: Record<string, (x: number, y: number) => boolean> = {
      '>': (x, y) => x > y,
      '<': (x, y) => x < y,
      '>=': (x, y) => x >= y,
      '<=': (x, y) => x <= y,
      '==': (x, y) => x === y,
      '!=': (x, y) => x !== y,
    };
    return lift(left, right, (x, y) => (tests[op]?.(x, y) ? 1 : 0));
  };
  const result = comparison();
  if (at !== tokens.length) throw new Error(`cannot model '${expression}': trailing tokens`);
  return result;
}
