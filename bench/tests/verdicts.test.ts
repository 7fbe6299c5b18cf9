// The benchmarks' verdicts (bench/support/measure.ts): a median's interval and what it allows to say.
import { describe, expect, it } from 'vitest';
import { intervalVerdict, medianInterval } from '../support/measure.js';

/** P(heads <= j) for n fair coin tosses, summed term by term. */
function binomialCdf(n: number, j: number): number {
  let sum = 0;
  let term = 0.5 ** n;
  for (let i = 0; i <= j; i++) {
    sum += term;
    term = (term * (n - i)) / (i + 1);
  }
  return sum;
}

describe('medianInterval', () => {
  it('is the order statistics a binomial table gives: the 4th and 12th of 15 values, the extremes of 6, none for 5', () => {
    const shuffled = [9, 3, 15, 1, 12, 7, 5, 14, 2, 11, 4, 13, 6, 10, 8];
    expect(medianInterval(shuffled)).toEqual([4, 12]);
    expect(medianInterval([6, 1, 5, 2, 4, 3])).toEqual([1, 6]);
    expect(medianInterval([1, 2, 3, 4, 5])).toBeUndefined();
  });

  it('covers the median with at least 95 % and is the narrowest such pair of order statistics, for 6 to 200 values', () => {
    for (let n = 6; n <= 200; n++) {
      const values = Array.from({ length: n }, (_, i) => i + 1);
      const [low] = medianInterval(values)!;
      const k = low; // the values are 1..n: the k-th smallest is k
      expect(1 - 2 * binomialCdf(n, k - 1)).toBeGreaterThanOrEqual(0.95);
      expect(1 - 2 * binomialCdf(n, k)).toBeLessThan(0.95);
      expect(medianInterval(values)![1]).toBe(n + 1 - k);
    }
  });
});

describe('intervalVerdict', () => {
  it('says met or MISSED only when the whole interval is on one side of the bound, and nothing on a busy machine', () => {
    expect(intervalVerdict(true, [0.91, 0.97], 0.9, true)).toBe('met');
    expect(intervalVerdict(true, [0.8, 0.89], 0.9, true)).toBe('MISSED');
    expect(intervalVerdict(true, [0.86, 0.93], 0.9, true)).toMatch(/^undecided/);
    expect(intervalVerdict(true, [1.1, 1.25], 1.3, false)).toBe('met');
    expect(intervalVerdict(true, [1.35, 1.5], 1.3, false)).toBe('MISSED');
    expect(intervalVerdict(true, undefined, 0.9, true)).toMatch(/^undecided/);
    expect(intervalVerdict(false, [0.95, 0.99], 0.9, true)).toBe('not quiet');
  });
});
