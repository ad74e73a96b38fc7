import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
let built: Promise<string> | undefined;

/** Compiles the real single executable once per test run, with the same flags as `npm run build`. */
export function binary(): Promise<string> {
  built ??= (async () => {
    const out = join(mkdtempSync(join(tmpdir(), "hub-bin-")), "hub-agent");
    const flags = [
      "--compile",
      "--bytecode",
      "--format=esm",
      "--no-compile-autoload-dotenv",
      "--no-compile-autoload-bunfig",
    ];
    const p = Bun.spawn([process.execPath, "build", ...flags, "cli/main.ts", "--outfile", out], {
      cwd: root,
      stdout: "ignore",
      stderr: "pipe",
    });
    if ((await p.exited) !== 0) throw new Error(`build failed: ${await new Response(p.stderr).text()}`);
    return out;
  })();
  return built;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled CLI with a clean environment (plus `env`), no stdin, in `cwd`. */
export async function hub(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  const p = Bun.spawn([await binary(), ...args], {
    cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), "hub-cwd-")),
    env: { PATH: process.env.PATH ?? "", ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}
