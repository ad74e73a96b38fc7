/**
 * The Pterodactyl egg format (PTDL_v2) as a valibot schema, with the validation rules its variables carry:
 * docs/packaging.md §2 describes both. Stricter than the panel where the panel would silently ignore a mistake
 * (an unknown key), as strict where it refuses (author, images, variable names, rules).
 */
import * as v from "valibot";

/** What a variable may not be called: the panel sets these itself (docs/packaging.md §2). */
export const RESERVED_ENV_NAMES = [
  "SERVER_MEMORY",
  "SERVER_IP",
  "SERVER_PORT",
  "ENV",
  "HOME",
  "USER",
  "STARTUP",
  "SERVER_UUID",
  "UUID",
];

/** "Display name|image" as the panel's egg form checks each image. */
const IMAGE_LINE = /^[\w#./\- ]*\|?~?[\w./\-:@ ]*$/;

const text = (max: number) => v.pipe(v.string(), v.nonEmpty(), v.maxLength(max));

/** A string holding JSON of the given shape: the panel keeps config.files, .startup and .logs as JSON text. */
const jsonText = <T extends v.GenericSchema>(schema: T) =>
  v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      try {
        return JSON.parse(dataset.value) as unknown;
      } catch (e) {
        addIssue({ message: `is not JSON: ${(e as Error).message}` });
        return NEVER;
      }
    }),
    schema,
  );

/** config.startup: the line(s) that mark the server started ("regex:" for a regular expression). */
const StartupConfig = v.strictObject({
  done: v.union([v.pipe(v.string(), v.nonEmpty()), v.pipe(v.array(v.pipe(v.string(), v.nonEmpty())), v.minLength(1))]),
  strip_ansi: v.optional(v.boolean()),
  user_interaction: v.optional(v.array(v.string())),
});

/** config.files: file name → how the panel edits it before each start. */
const FilesConfig = v.record(
  v.string(),
  v.object({
    parser: v.picklist(["file", "yaml", "properties", "ini", "json", "xml"]),
    find: v.record(v.string(), v.unknown()),
  }),
);

export const EggVariable = v.strictObject({
  name: text(191),
  description: v.string(),
  env_variable: v.pipe(
    v.string(),
    v.regex(/^\w{1,191}$/, "must be letters, digits and _ (at most 191)"),
    v.check((name) => !RESERVED_ENV_NAMES.includes(name.toUpperCase()), "is reserved by the panel"),
  ),
  default_value: v.string(),
  user_viewable: v.boolean(),
  user_editable: v.boolean(),
  rules: v.pipe(
    v.string(),
    v.nonEmpty(),
    v.rawCheck(({ dataset, addIssue }) => {
      if (dataset.typed) for (const problem of ruleProblems(dataset.value)) addIssue({ message: problem });
    }),
  ),
  field_type: v.optional(v.literal("text")),
});

export const Egg = v.strictObject({
  _comment: v.optional(v.string()),
  meta: v.strictObject({
    version: v.literal("PTDL_v2"),
    update_url: v.optional(v.nullable(v.pipe(v.string(), v.url()))),
  }),
  exported_at: v.optional(v.pipe(v.string(), v.isoTimestamp())),
  name: text(191),
  author: v.pipe(v.string(), v.email("must be an e-mail address (the panel refuses the egg otherwise)")),
  description: v.nullable(v.string()),
  features: v.nullable(v.array(v.string())),
  docker_images: v.pipe(
    v.record(text(191), text(191)),
    v.check((images) => Object.keys(images).length > 0, "needs at least one image"),
    v.check(
      (images) => Object.entries(images).every(([name, image]) => IMAGE_LINE.test(`${name}|${image}`)),
      "a name or image has characters the panel's egg form refuses",
    ),
  ),
  file_denylist: v.array(v.string()),
  startup: v.pipe(v.string(), v.nonEmpty()),
  config: v.strictObject({
    files: jsonText(FilesConfig),
    startup: jsonText(StartupConfig),
    logs: jsonText(v.record(v.string(), v.unknown())),
    stop: text(191),
  }),
  scripts: v.strictObject({
    installation: v.strictObject({ script: v.string(), container: text(191), entrypoint: text(191) }),
  }),
  variables: v.array(EggVariable),
});
export type Egg = v.InferOutput<typeof Egg>;

/**
 * The Laravel validation rules eggs use, with their parameters: name → how many parameters (a range), or a check
 * of the parameter text.
 */
const RULES: Record<string, (params: string | undefined) => string | undefined> = {
  required: none,
  nullable: none,
  string: none,
  integer: none,
  numeric: none,
  boolean: none,
  url: none,
  alpha_num: none,
  alpha_dash: none,
  max: (p) => (isInt(p) ? undefined : "takes one whole number"),
  min: (p) => (isInt(p) ? undefined : "takes one whole number"),
  size: (p) => (isInt(p) ? undefined : "takes one whole number"),
  between: range,
  digits_between: range,
  in: (p) => (p && p.split(",").every((x) => x !== "") ? undefined : "takes a comma-separated list of values"),
  regex: (p) => {
    try {
      pcre(p ?? "");
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  },
};

function none(params: string | undefined) {
  return params === undefined ? undefined : "takes no parameter";
}
function isInt(p: string | undefined): boolean {
  return p !== undefined && /^\d+$/.test(p);
}
function range(p: string | undefined) {
  const [a, b, ...rest] = (p ?? "").split(",");
  return isInt(a) && isInt(b) && !rest.length && Number(a) <= Number(b)
    ? undefined
    : "takes two whole numbers, the lower first";
}

/** A PHP (PCRE) pattern such as /^\d+$/i as a JavaScript RegExp; throws when it is not one. */
function pcre(pattern: string): RegExp {
  const delimiter = pattern[0] ?? "";
  const end = pattern.lastIndexOf(delimiter);
  if (!delimiter || /[\w\s\\]/.test(delimiter) || end < 1) throw new Error(`${pattern} has no delimiters, e.g. /…/`);
  const flags = pattern.slice(end + 1);
  if (!/^[imsu]*$/.test(flags)) throw new Error(`${pattern}: flags other than i, m, s, u are not checked here`);
  return new RegExp(pattern.slice(1, end), flags);
}

/** "required|string|max:20" → [["required"], ["string"], ["max", "20"]]; the first ":" separates the parameters. */
function parseRules(rules: string): [name: string, params: string | undefined][] {
  // Laravel splits a rule string at every "|", also inside a regex: such a pattern must not contain one.
  return rules.split("|").map((rule) => {
    const colon = rule.indexOf(":");
    return colon === -1 ? [rule, undefined] : [rule.slice(0, colon), rule.slice(colon + 1)];
  });
}

/** Each problem with a rule string, as a line; [] when Laravel would accept every rule. */
export function ruleProblems(rules: string): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const [name, params] of parseRules(rules)) {
    const check = RULES[name];
    if (!check) problems.push(`"${name}" is not one of the rules eggs use (${Object.keys(RULES).join(", ")})`);
    else {
      const problem = check(params);
      if (problem) problems.push(`${name} ${problem}`);
    }
    if (names.has(name)) problems.push(`${name} is given twice`);
    names.add(name);
  }
  if (names.has("required") && names.has("nullable")) problems.push("required and nullable contradict each other");
  return problems;
}

/**
 * Whether a value passes the rules as the panel checks a server's variable: an empty value passes a `nullable`
 * variable; sizes are a string's length, or the number itself with `integer` or `numeric`.
 */
export function passesRules(value: string, rules: string): boolean {
  const parsed = parseRules(rules);
  const has = (n: string) => parsed.some(([name]) => name === n);
  if (value === "") return !has("required");
  const numeric = has("integer") || has("numeric");
  const size = numeric ? Number(value) : [...value].length;
  return parsed.every(([name, params = ""]) => {
    const [a = "", b = ""] = params.split(",");
    switch (name) {
      case "integer":
        return /^[+-]?\d+$/.test(value);
      case "numeric":
        return value.trim() !== "" && Number.isFinite(Number(value));
      case "boolean":
        return ["0", "1", "true", "false"].includes(value);
      case "url":
        return URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);
      case "alpha_num":
        return /^[\p{L}\p{M}\p{N}]+$/u.test(value);
      case "alpha_dash":
        return /^[\p{L}\p{M}\p{N}_-]+$/u.test(value);
      case "max":
        return size <= Number(a);
      case "min":
        return size >= Number(a);
      case "size":
        return size === Number(a);
      case "between":
        return size >= Number(a) && size <= Number(b);
      case "digits_between":
        return /^\d+$/.test(value) && value.length >= Number(a) && value.length <= Number(b);
      case "in":
        return params.split(",").includes(value);
      case "regex":
        return pcre(params).test(value);
      default:
        return true; // required, nullable, string: a non-empty string passes them
    }
  });
}

/** The values an `in:` rule allows, or undefined. */
export function inValues(rules: string): string[] | undefined {
  return parseRules(rules)
    .find(([name]) => name === "in")?.[1]
    ?.split(",");
}
