/**
 * Layering guard rails, run by .ci/run: no import cycle inside lib/ (type-only imports count: they tie the modules
 * together just the same), lib/ never imports cli/, and production code reaches the in-memory service (lib/sandbox/)
 * only from the `demo` and `sandbox` commands. State where it belongs: the player lists (lib/players/) sit below
 * the features and never import them; a feature sees the game through the GameBridge (lib/game/bridge.ts) only,
 * never a transport, preset or source; lib/config/ and lib/game/ never import each other (lib/app/config.ts hands
 * the configuration the game's vocabulary). cli/ reaches the store, the game, the service client and the monitor
 * only through lib/app/ (the one place that assembles the program). Static and dynamic imports alike. And no module
 * state in cli/ (a top-level `let` or `var`, an exit code set on the process). Prints each violation; exit 1.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
/** The `demo` and `sandbox` commands' operations (lib/app/). */
const SANDBOX_USERS = new Set(["lib/app/demo.ts", "lib/app/demo-recorder.ts", "lib/app/sandbox.ts"]);
const GAME_BRIDGE = "lib/game/bridge.ts";
const CLI_NEVER = ["lib/store/", "lib/game/", "lib/api/", "lib/monitor/"];

function files(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** The repository paths a file imports (relative specifiers only; packages and node: are outside the rules). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gms),
    ...text.matchAll(/^\s*import\s+"([^"]+)"/gm),
    ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
  ].map((m) => m[1] as string);
  return specs.filter((s) => s.startsWith(".")).map((s) => relative(root, resolve(root, dirname(file), s)));
}

const graph = new Map<string, string[]>();
for (const file of [...files("lib"), ...files("cli")]) graph.set(file, importsOf(file));

const problems: string[] = [];
for (const [file, deps] of graph) {
  for (const dep of deps) {
    if (file.startsWith("lib/") && dep.startsWith("cli/"))
      problems.push(`${file} imports ${dep}: lib/ never imports cli/`);
    if (dep.startsWith("lib/sandbox/") && !file.startsWith("lib/sandbox/") && !SANDBOX_USERS.has(file))
      problems.push(`${file} imports ${dep}: only the demo and sandbox commands use the in-memory service`);
    if (file.startsWith("cli/") && CLI_NEVER.some((floor) => dep.startsWith(floor)))
      problems.push(`${file} imports ${dep}: cli/ reaches ${dep.split("/")[1]} through lib/app/ only`);
    if (file.startsWith("lib/players/") && dep.startsWith("lib/features/"))
      problems.push(`${file} imports ${dep}: the player lists sit below the features`);
    if (file.startsWith("lib/features/") && dep.startsWith("lib/game/") && dep !== GAME_BRIDGE)
      problems.push(`${file} imports ${dep}: features see the game through ${GAME_BRIDGE} only`);
    if (file.startsWith("lib/game/") && dep.startsWith("lib/config/"))
      problems.push(`${file} imports ${dep}: the game never imports the configuration (lib/app/config.ts joins them)`);
    if (file.startsWith("lib/config/") && dep.startsWith("lib/game/"))
      problems.push(`${file} imports ${dep}: the configuration never imports the game (lib/app/config.ts joins them)`);
  }
}

// Cycles in lib/: strongly connected components of more than one module (Tarjan).
const lib = [...graph.keys()].filter((f) => f.startsWith("lib/"));
const index = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
let next = 0;
function visit(v: string): void {
  index.set(v, next);
  low.set(v, next++);
  stack.push(v);
  onStack.add(v);
  for (const w of (graph.get(v) ?? []).filter((d) => d.startsWith("lib/") && graph.has(d))) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
  }
  if (low.get(v) === index.get(v)) {
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1)
      problems.push(`import cycle in lib/ (${component.length} modules): ${component.sort().join(", ")}`);
  }
}
for (const v of lib) if (!index.has(v)) visit(v);

// No module state in cli/: a command line's own state travels in its Invocation (cli/context.ts), so one process
// can run several in turn. A top-level `let`/`var`, or an exit code set on the process, is refused.
for (const file of graph.keys()) {
  if (!file.startsWith("cli/")) continue;
  const text = readFileSync(join(root, file), "utf8");
  for (const m of text.matchAll(/^(?:export )?(?:let|var) \w+|process\.exitCode\s*=(?!=)/gm))
    problems.push(`${file}: \`${m[0]}\`: no module state in cli/ (a command line's state is its Invocation)`);
}

for (const p of problems) console.error(`check-imports: ${p}`);
if (problems.length) process.exit(1);
console.log(`check-imports: ${graph.size} modules, no cycle in lib/, layers respected`);
