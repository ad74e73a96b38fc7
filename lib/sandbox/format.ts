// Value formats of the service (docs/service-api.md §1.7): Pydantic v1 isoformat datetimes, float seconds,
// lowercase uuids.

/** Epoch milliseconds; may carry a microsecond fraction (e.g. 1717243101904.113) so seeded times round-trip. */
export type Millis = number;

/** Python `datetime.isoformat()` in UTC: `+00:00`, microseconds only when non-zero. */
export function isoformat(ms: Millis): string {
  const micros = Math.round(ms * 1000);
  const whole = Math.floor(micros / 1_000_000);
  const fraction = micros - whole * 1_000_000;
  const base = new Date(whole * 1000).toISOString().slice(0, 19);
  return `${base}${fraction ? `.${String(fraction).padStart(6, "0")}` : ""}+00:00`;
}

const DATETIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,6})\d*)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Parses what clients send: `Z`, `±hh:mm`, optional fraction; a naive time is taken as UTC. Undefined when invalid. */
export function parseDateTime(text: string): Millis | undefined {
  const m = DATETIME.exec(text.trim());
  if (!m) return undefined;
  const [, date, time, fraction = "", zone = "Z"] = m;
  const offset = zone.toUpperCase() === "Z" ? "Z" : zone.replace(/^([+-]\d{2})(\d{2})$/, "$1:$2");
  const whole = Date.parse(`${date}T${time!.length === 5 ? `${time}:00` : time}${offset}`);
  if (Number.isNaN(whole)) return undefined;
  return fraction ? whole + Number(fraction.padEnd(6, "0")) / 1000 : whole;
}

/** A number that must be written with a decimal point, like Python floats (`604800.0`). */
export class Float {
  constructor(readonly value: number) {}
}

export const seconds = (s: number | null): Float | null => (s === null ? null : new Float(s));

const MARK = "\u0000float:";

/** JSON.stringify that writes Float values as Python would (`604800.0`, `1.5`). */
export function toJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (!(v instanceof Float)) return v;
    return Number.isInteger(v.value) ? `${MARK}${v.value}.0` : `${MARK}${v.value}`;
  });
  return text === undefined ? "null" : text.replace(/"\\u0000float:([^"]+)"/g, "$1");
}

const UUID = /^(?:urn:uuid:)?\{?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})\}?$/i;

/** Lowercase hyphenated form of any uuid spelling Python's `UUID()` accepts; undefined when invalid. */
export function normalizeUuid(text: string): string | undefined {
  const m = UUID.exec(text.trim());
  return m ? m.slice(1).join("-").toLowerCase() : undefined;
}
