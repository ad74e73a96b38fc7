/** npm's parse-prometheus-text-format (no types of its own): prom2json's output, values as written. */
declare module "parse-prometheus-text-format" {
  export interface MetricFamily {
    name: string;
    help: string;
    type: "GAUGE" | "COUNTER" | "UNTYPED" | "HISTOGRAM" | "SUMMARY";
    metrics: { value: string; labels?: Record<string, string> }[];
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
