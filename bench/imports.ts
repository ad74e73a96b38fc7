/**
 * What each import costs a one-shot command: for every module below, a compiled program (the flags of
 * `npm run build`) that imports just it and prints one line, timed against the same program importing nothing,
 * interleaved in one run. The "extra" column is what that import adds to every start-up.
 * Run: npm run bench:imports [-- --runs N]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCommand } from "../test/cli/binary.ts";

const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 25;
const root = join(import.meta.dir, "..");
const MODULES: Record<string, string> = {
  "(nothing)": "",
  citty: "citty",
  "consola/core": "consola/core",
  valibot: "valibot",
  unstorage: "unstorage",
  "cli/log.ts": "./cli/log.ts",
  "cli/context.ts": "./cli/context.ts",
  "cli/runner.ts": "./cli/runner.ts",
  "lib/config": "./lib/config/index.ts",
  "lib/store": "./lib/store/index.ts",
  "lib/api/client.ts": "./lib/api/client.ts",
  "lib/queues.ts": "./lib/queues.ts",
  "lib/sanctions": "./lib/sanctions/index.ts",
  "cli/commands/queue.ts": "./cli/commands/queue.ts",
  "cli/commands/ban.ts": "./cli/commands/ban.ts",
};

// The entry files live in the repository (so packages resolve); the programs in a temp dir.
const out = mkdtempSync(join(tmpdir(), "hub-imports-"));
const entries = join(root, ".bench-imports");
const names = Object.keys(MODULES);
try {
  for (const [i, name] of names.entries()) {
    const spec = MODULES[name]!;
    const src = join(entries, `m${i}.ts`);
    const path = spec.startsWith("./") ? `../${spec.slice(2)}` : spec;
    await Bun.write(
      src,
      spec ? `import * as m from "${path}";\n(globalThis as any).m = m;\nconsole.log("x");\n` : `console.log("x");\n`,
    );
    const r = Bun.spawnSync(buildCommand(src, join(out, `m${i}`)), { cwd: root, stdout: "ignore", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`build of ${name} failed: ${r.stderr.toString()}`);
  }
} finally {
  rmSync(entries, { recursive: true, force: true });
}

const times = names.map(() => [] as number[]);
for (let r = 0; r < runs; r++) {
  for (const i of names.keys()) {
    const t0 = performance.now();
    Bun.spawnSync([join(out, `m${i}`)], { stdout: "ignore" });
    times[i]!.push(performance.now() - t0);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(times[0]!);
console.log(`${runs} interleaved runs each; median wall time of a compiled program that imports only this\n`);
console.log("import".padEnd(24) + "median ms".padStart(10) + "extra ms".padStart(10));
for (const [i, name] of names.entries()) {
  const ms = median(times[i]!);
  console.log(name.padEnd(24) + ms.toFixed(1).padStart(10) + (i ? (ms - base).toFixed(1) : "").padStart(10));
}
rmSync(out, { recursive: true, force: true });
