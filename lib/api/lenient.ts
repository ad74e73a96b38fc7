/**
 * The lenient building blocks of every response schema (docs/service-api.md §4): the service grows fields and enum
 * values between releases, so enums are open and a list answer is read item by item, an unreadable item left out and
 * collected for the caller to report. Separate from the models because the transport (http.ts) collects the skipped
 * items of any answer without knowing its model.
 */
import * as v from "valibot";

/** Known values plus any other string; the known literals stay visible to the type checker. */
export function openEnum<const T extends readonly [string, ...string[]]>(known: T) {
  return v.union([v.picklist(known), v.custom<string & {}>((x) => typeof x === "string", "Expected a string")]);
}

/** Ids are opaque strings; extra JSON objects stay untyped. */
export const Id = v.string();
export const Json = v.record(v.string(), v.unknown());

/** An item of a list answer that failed its schema and was left out. */
export interface SkippedItem {
  /** Where in the answer, e.g. `76561198012345671[0]` or `items[3]`. */
  at: string;
  /** The item's own id when it has one, so an operator can find it. */
  id?: string;
  /** The first problem, e.g. `ends_on: Invalid format`. */
  problem: string;
}

/** Items skipped while one answer is parsed; parsing is synchronous, so one collector at a time is enough. */
let skipped: SkippedItem[] | undefined;

/** Parses with `parse` and returns what the lenient lists inside left out, for the caller to report. */
export function collectSkipped<T>(parse: () => T): { result: T; skipped: SkippedItem[] } {
  const outer = skipped;
  const mine: SkippedItem[] = [];
  skipped = mine;
  try {
    return { result: parse(), skipped: mine };
  } finally {
    skipped = outer;
  }
}

/** The items that match `item`; one unreadable item is skipped (and collected), never voids the list. */
function keepValid<T extends v.GenericSchema>(item: T, list: unknown[], at: (i: number) => string) {
  const out: v.InferOutput<T>[] = [];
  for (const [i, x] of list.entries()) {
    const r = v.safeParse(item, x);
    if (r.success) {
      out.push(r.output);
      continue;
    }
    const issue = r.issues[0];
    const field = v.getDotPath(issue);
    const id =
      x && typeof x === "object" && typeof (x as { id?: unknown }).id === "string"
        ? (x as { id: string }).id
        : undefined;
    skipped?.push({ at: at(i), ...(id ? { id } : {}), problem: `${field ? `${field}: ` : ""}${issue.message}` });
  }
  return out;
}

/**
 * A list answer read item by item (see keepValid). Typed as taking the items' input, like a strict array, so it
 * also serves caches (whose schemas read back what they wrote); at run time it takes any array.
 */
export function lenientArray<T extends v.GenericSchema>(item: T, name = "") {
  return v.pipe(
    v.array(v.unknown()),
    v.transform((list) => keepValid(item, list, (i) => `${name}[${i}]`)),
  ) as unknown as v.GenericSchema<v.InferInput<T>[], v.InferOutput<T>[]>;
}

/**
 * A keyed answer of lists (foreign id → items), read item by item (see keepValid); a key whose value is no list is
 * left out and collected like an unreadable item: it never voids the other keys.
 */
export function lenientListMap<T extends v.GenericSchema>(item: T) {
  return v.pipe(
    v.record(v.string(), v.unknown()),
    v.transform((map) => {
      const out: Record<string, v.InferOutput<T>[]> = {};
      for (const [key, list] of Object.entries(map)) {
        if (Array.isArray(list)) out[key] = keepValid(item, list, (i) => `${key}[${i}]`);
        else skipped?.push({ at: key, problem: `Invalid type: Expected Array but received ${typeName(list)}` });
      }
      return out;
    }),
  ) as unknown as v.GenericSchema<Record<string, v.InferInput<T>[]>, Record<string, v.InferOutput<T>[]>>;
}

const typeName = (x: unknown) => (x === null ? "null" : typeof x);

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
}
/** Page[T]: 1-based `page`; `total` counts all items before slicing. */
export function pageSchema<T extends v.GenericSchema>(item: T) {
  return v.looseObject({ items: lenientArray(item, "items"), total: v.number(), page: v.number(), size: v.number() });
}
