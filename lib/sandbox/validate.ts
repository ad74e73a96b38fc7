// Request validation with Pydantic v1's lenient coercion ("24" → 24, "true" → true, 1.25 → "1.25") and its
// 422 error items ({loc, msg, type}), so clients meet the same answers the real service gives.
import { normalizeUuid, parseDateTime, type Millis } from "./format.ts";

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: Record<string, unknown>;
}

/** Thrown by `Input.done()`; the handler answers 422 `{detail: issues}`. */
export class ValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "));
  }
}

export type Kind =
  | "str"
  | "int"
  | "float"
  | "bool"
  | "uuid"
  | "datetime"
  | "timedelta"
  | "dict"
  | "any"
  | { enum: readonly string[] }
  | { list: Kind };

export interface Field {
  kind: Kind;
  required?: boolean;
}
export type Fields = Record<string, Field>;

export const req = (kind: Kind): Field => ({ kind, required: true });
export const opt = (kind: Kind): Field => ({ kind });

const TRUE = new Set(["1", "on", "t", "true", "y", "yes"]);
const FALSE = new Set(["0", "off", "f", "false", "n", "no"]);
const NUMBER = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?\s*$/i;
const DURATION = /^\s*(?:(-?\d+) days?,? )?(?:(\d+):(\d\d?):)?(\d+(?:\.\d+)?)\s*$/;

/** Collects issues over several fields so one 422 reports all of them, as FastAPI does. */
export class Input {
  readonly issues: ValidationIssue[] = [];

  private fail(loc: (string | number)[], msg: string, type: string, ctx?: Record<string, unknown>): undefined {
    this.issues.push(ctx ? { loc, msg, type, ctx } : { loc, msg, type });
    return undefined;
  }

  /** Coerces one value; undefined (with an issue recorded) when it cannot. */
  value(raw: unknown, kind: Kind, loc: (string | number)[]): unknown {
    if (typeof kind === "object" && "enum" in kind) {
      if (typeof raw === "string" && kind.enum.includes(raw)) return raw;
      const permitted = kind.enum.map((e) => `'${e}'`).join(", ");
      return this.fail(loc, `value is not a valid enumeration member; permitted: ${permitted}`, "type_error.enum", {
        enum_values: [...kind.enum],
      });
    }
    if (typeof kind === "object") {
      if (!Array.isArray(raw)) return this.fail(loc, "value is not a valid list", "type_error.list");
      return raw.map((item, i) => this.value(item, kind.list, [...loc, i]));
    }
    switch (kind) {
      case "any":
        return raw;
      case "str":
        // Pydantic v1's `str` is not strict: a number becomes its text (Minecraft sends playtime `value` as one).
        if (typeof raw === "string") return raw;
        if (typeof raw === "number") return String(raw);
        return this.fail(loc, "str type expected", "type_error.str");
      case "int": {
        const n =
          typeof raw === "number"
            ? Math.trunc(raw)
            : typeof raw === "string" && /^\s*[+-]?\d+\s*$/.test(raw)
              ? Number(raw)
              : NaN;
        return Number.isFinite(n) ? n : this.fail(loc, "value is not a valid integer", "type_error.integer");
      }
      case "float": {
        const n = typeof raw === "number" ? raw : typeof raw === "string" && NUMBER.test(raw) ? Number(raw) : NaN;
        return Number.isFinite(n) ? n : this.fail(loc, "value is not a valid float", "type_error.float");
      }
      case "bool":
        if (typeof raw === "boolean") return raw;
        if (raw === 0 || raw === 1) return raw === 1;
        if (typeof raw === "string" && TRUE.has(raw.toLowerCase())) return true;
        if (typeof raw === "string" && FALSE.has(raw.toLowerCase())) return false;
        return this.fail(loc, "value could not be parsed to a boolean", "type_error.bool");
      case "uuid":
        return (
          (typeof raw === "string" && normalizeUuid(raw)) ||
          this.fail(loc, "value is not a valid uuid", "type_error.uuid")
        );
      case "datetime": {
        // Pydantic v1 also takes unix seconds (or milliseconds when the number is huge).
        const ms: Millis | undefined =
          typeof raw === "number"
            ? Math.abs(raw) > 2e10
              ? raw
              : raw * 1000
            : typeof raw === "string"
              ? parseDateTime(raw)
              : undefined;
        return ms ?? this.fail(loc, "invalid datetime format", "value_error.datetime");
      }
      case "timedelta": {
        if (typeof raw === "number") return raw;
        const m = typeof raw === "string" ? DURATION.exec(raw) : null;
        if (!m) return this.fail(loc, "invalid duration format", "value_error.duration");
        return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4]);
      }
      case "dict":
        if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) return raw;
        return this.fail(loc, "value is not a valid dict", "type_error.dict");
    }
  }

  /** A JSON body against a field table; unknown keys are ignored, absent optional ones come back as null. */
  body<T>(raw: unknown, fields: Fields, loc: (string | number)[] = ["body"]): T {
    if (raw === undefined) {
      this.fail(loc, "field required", "value_error.missing");
      return {} as T;
    }
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      this.fail(loc, "value is not a valid dict", "type_error.dict");
      return {} as T;
    }
    const out: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(fields)) {
      const value = (raw as Record<string, unknown>)[name];
      if (value === undefined && field.required) this.fail([...loc, name], "field required", "value_error.missing");
      else if (value === null && field.required)
        this.fail([...loc, name], "none is not an allowed value", "type_error.none.not_allowed");
      else if (value === undefined || value === null) out[name] = null;
      else out[name] = this.value(value, field.kind, [...loc, name]);
    }
    return out as T;
  }

  /** One query parameter (the last occurrence wins, as in Starlette); null when absent. */
  query<T = string>(params: URLSearchParams, name: string, kind: Kind = "str", required = false): T | null {
    const all = params.getAll(name);
    if (all.length === 0) {
      if (required) this.fail(["query", name], "field required", "value_error.missing");
      return null;
    }
    return (this.value(all[all.length - 1], kind, ["query", name]) ?? null) as T | null;
  }

  /** A repeated query parameter (`user_id=a&user_id=b`); null when absent. */
  queryList<T = string>(params: URLSearchParams, name: string, kind: Kind = "str"): T[] | null {
    const all = params.getAll(name);
    if (all.length === 0) return null;
    return all.map((v, i) => this.value(v, kind, ["query", name, i])) as T[];
  }

  /** A path parameter that must be a uuid. */
  path(value: string, name: string, kind: Kind = "uuid"): string {
    return (this.value(value, kind, ["path", name]) as string | undefined) ?? value;
  }

  done(): void {
    if (this.issues.length) throw new ValidationError(this.issues);
  }
}
