/**
 * The p-th percentile of `xs` by nearest rank: the smallest sample with at least p % of the samples at or below it.
 * With fewer than 100 samples, p99 is the largest; with 100, the second largest (the largest is printed as max).
 */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}
